package dev.uatu.sidecar.adb

import dev.uatu.sidecar.android.Logcat
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.LinkedBlockingQueue

/**
 * The fake device's log buffers (`main`, `system`, `crash`, `events`) and
 * `logcat` over them, printing what `logcat -v monotonic` prints: seconds since
 * boot, pid, tid, level, tag, message, with `--------- beginning of BUFFER`
 * before a buffer's first line and `--------- switch to BUFFER` where it changes
 * back. `-d` prints what is there and ends; without it logcat goes on printing
 * new lines until it is stopped ([stream]).
 */
class DeviceLog(initial: String, private val nowMs: () -> Long) {
    private class Line(val buffer: String, val pid: Int?, val level: Char, val text: String)

    private val lines = ArrayList<Line>()
    private val followers = CopyOnWriteArrayList<(Line) -> Unit>()

    init {
        var buffer = "main"
        for (text in initial.lines()) {
            if (text.isBlank()) continue
            Logcat.bufferHeader(text)?.let {
                buffer = it
                continue
            }
            val words = text.trim().split(Regex("\\s+"))
            lines += Line(buffer, words.getOrNull(1)?.toIntOrNull(), words.getOrNull(3)?.singleOrNull() ?: 'I', text)
        }
    }

    /** Writes a line to [buffer], stamped with the device's clock now. */
    fun add(buffer: String, pid: Int, tid: Int, level: Char, tag: String, message: String) {
        val ms = nowMs()
        val stamp = "%5d.%03d".format(ms / 1000, ms % 1000)
        val added = message.lines().map { part -> Line(buffer, pid, level, "$stamp %5d %5d %c %-8s: %s".format(pid, tid, level, tag, part)) }
        synchronized(lines) { lines += added }
        for (line in added) followers.forEach { it(line) }
    }

    /** What `logcat ARGS` prints at once; [follow] says whether it would go on (no `-d`). */
    class Query(val buffers: Set<String>, val pid: Int?, val minLevel: Char, val follow: Boolean)

    fun dump(query: Query): String = render(synchronized(lines) { lines.toList() }.filter { it.matches(query) }, Headers())

    /** The lines now, then every new one, until closed: `logcat` without `-d`. */
    fun stream(query: Query): ShellStream {
        val queue = LinkedBlockingQueue<ByteArray>()
        val headers = Headers()
        val follower: (Line) -> Unit = { line ->
            if (line.matches(query)) queue.add((headers.before(line.buffer) + line.text + "\n").toByteArray(Charsets.UTF_8))
        }
        synchronized(lines) {
            queue.add(render(lines.filter { it.matches(query) }, headers).toByteArray(Charsets.UTF_8))
            followers += follower
        }
        return object : ShellStream {
            @Volatile
            private var closed = false

            override fun next(): ByteArray? {
                while (!closed) {
                    val piece = queue.poll(POLL_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS) ?: continue
                    if (piece.isNotEmpty()) return piece
                }
                return null
            }

            override fun close() {
                closed = true
                followers -= follower
            }
        }
    }

    private fun Line.matches(query: Query): Boolean =
        buffer in query.buffers && (query.pid == null || pid == query.pid) && LEVELS.indexOf(level) >= LEVELS.indexOf(query.minLevel)

    private fun render(selected: List<Line>, headers: Headers): String = buildString {
        for (line in selected) append(headers.before(line.buffer)).append(line.text).append('\n')
    }

    /** The lines logcat prints where the buffer changes, for one output. */
    private class Headers {
        private var current: String? = null
        private val seen = HashSet<String>()

        @Synchronized
        fun before(buffer: String): String {
            if (buffer == current) return ""
            current = buffer
            return if (seen.add(buffer)) "--------- beginning of $buffer\n" else "--------- switch to $buffer\n"
        }
    }

    companion object {
        private const val LEVELS = "VDIWEFA"
        private const val POLL_MILLIS = 100L

        /** What logcat reads without `-b`. */
        val DEFAULT_BUFFERS = setOf("main", "system", "crash")

        /**
         * Reads logcat's arguments: `-d`, `-b BUFFER[,BUFFER]` (repeatable),
         * `--pid=PID`, a filter spec `'*:L'`; `-v FORMAT` and others are accepted
         * and ignored (the output is always `-v monotonic`'s).
         */
        fun query(words: List<String>): Query {
            val buffers = LinkedHashSet<String>()
            var pid: Int? = null
            var level = 'V'
            var follow = true
            var i = 1
            while (i < words.size) {
                val word = words[i].removeSurrounding("'")
                when {
                    word == "-d" -> follow = false
                    word == "-b" -> buffers += words.getOrElse(++i) { "" }.split(',')
                    word.startsWith("--pid=") -> pid = word.removePrefix("--pid=").toIntOrNull()
                    word.startsWith("*:") -> level = word.removePrefix("*:").firstOrNull()?.uppercaseChar() ?: 'V'
                    word in setOf("-v", "-T", "-t") -> i++
                }
                i++
            }
            return Query(if (buffers.isEmpty()) DEFAULT_BUFFERS else buffers, pid, level, follow)
        }
    }
}
