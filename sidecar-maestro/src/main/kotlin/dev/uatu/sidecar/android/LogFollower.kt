package dev.uatu.sidecar.android

import dev.uatu.sidecar.adb.ShellStream
import java.io.ByteArrayOutputStream
import java.io.IOException

/**
 * The device's log read as it is written ([Logcat.FOLLOW], one `logcat` that
 * keeps running), instead of the whole buffer again at every step; kept in
 * memory up to [capacity] lines. It reads the buffers an app's trouble shows in:
 * `main` (the app's own lines), `system` (the activity manager's `Start proc`,
 * `ANR in`) and `crash` (the runtime's `FATAL EXCEPTION`, which outlives the
 * process), so nothing a dead process wrote is lost.
 *
 * Output arrives in pieces cut anywhere: a line is read once it is whole, and
 * decoded as UTF-8 then.
 */
class LogFollower(private val stream: ShellStream, private val capacity: Int = 20_000) : AutoCloseable {
    /** A line with the buffer it is in. */
    data class Entry(val buffer: String, val line: Logcat.Line)

    private val entries = ArrayDeque<Entry>()
    private val reader = Thread(::read, "logcat-follower").apply {
        isDaemon = true
        start()
    }

    @Volatile
    var ended = false
        private set

    /** The lines read so far, oldest first. */
    fun entries(): List<Entry> = synchronized(entries) { entries.toList() }

    /** The pids of [packageName]'s processes, as the system's `Start proc PID:PACKAGE/…` lines name them. */
    fun pidsOf(packageName: String): Set<Int> {
        val start = Regex("""Start proc (\d+):${Regex.escape(packageName)}/""")
        return entries().mapNotNull { start.find(it.line.message)?.groupValues?.get(1)?.toIntOrNull() }.toSet()
    }

    /**
     * The last `FATAL EXCEPTION` of [packageName] in the crash buffer after
     * [sinceMs]: the runtime's lines, the stack included, as one text.
     */
    fun lastCrash(packageName: String, sinceMs: Long): String? {
        val crash = entries().filter { it.buffer == "crash" && it.line.timeMs >= sinceMs }
        val starts = crash.indices.filter { crash[it].line.message.startsWith("FATAL EXCEPTION") }
        for (start in starts.asReversed()) {
            val pid = crash[start].line.pid
            val block = crash.drop(start).takeWhile { it.line.pid == pid }.map { it.line.message }
            if (block.any { it.startsWith("Process: $packageName,") }) return block.joinToString("\n")
        }
        return null
    }

    /** The system's `ANR in PACKAGE` after [sinceMs], with its reason line, or null. */
    fun lastAnr(packageName: String, sinceMs: Long): String? {
        val lines = entries().filter { it.line.timeMs >= sinceMs }
        val index = lines.indexOfLast { it.line.message.startsWith("ANR in $packageName") }
        if (index < 0) return null
        val reason = lines.drop(index + 1).take(4).firstOrNull { it.line.message.startsWith("Reason: ") }?.line?.message
        return listOfNotNull(lines[index].line.message, reason).joinToString("; ")
    }

    private fun read() {
        var buffer = "main"
        val pending = ByteArrayOutputStream()
        try {
            while (true) {
                val piece = stream.next() ?: break
                for (byte in piece) {
                    if (byte != '\n'.code.toByte()) {
                        pending.write(byte.toInt())
                        continue
                    }
                    val text = pending.toString(Charsets.UTF_8)
                    pending.reset()
                    Logcat.bufferHeader(text)?.let {
                        buffer = it
                        continue
                    }
                    val line = Logcat.line(text) ?: continue
                    synchronized(entries) {
                        entries.addLast(Entry(buffer, line))
                        if (entries.size > capacity) entries.removeFirst()
                    }
                }
            }
        } catch (e: IOException) {
            // The device went away: so did its log.
        } finally {
            ended = true
        }
    }

    override fun close() {
        stream.close()
        reader.join(1_000)
    }
}
