package dev.uatu.sdk.core

/**
 * The app's log lines since the previous STATE, at most [capacity] of them: when
 * full the oldest line is dropped, and the next drain says how many were.
 */
class LogBuffer(private val capacity: Int = 1000, private val clock: () -> Long = System::currentTimeMillis) {
    init {
        require(capacity > 0) { "a log buffer needs room for at least one line" }
    }

    private val lines = ArrayDeque<LogEntry>()
    private var dropped = 0L

    fun add(entry: LogEntry) = synchronized(this) {
        if (lines.size == capacity) {
            lines.removeFirst()
            dropped++
        }
        lines.addLast(entry)
    }

    fun add(level: LogLevel, tag: String, message: String) = add(LogEntry(clock(), level, tag, message))

    /** Puts lines that could not be delivered back in front, within the capacity. */
    fun restore(entries: List<LogEntry>) = synchronized(this) {
        for (entry in entries.asReversed()) {
            if (lines.size == capacity) {
                dropped++
                continue
            }
            lines.addFirst(entry)
        }
    }

    fun drain(): List<LogEntry> = synchronized(this) {
        val out = ArrayList<LogEntry>(lines.size + 1)
        if (dropped > 0) {
            out += LogEntry(clock(), LogLevel.WARN, SDK_LOG_TAG, "uatu dropped $dropped log lines: the buffer holds $capacity between two pauses")
            dropped = 0
        }
        out += lines
        lines.clear()
        out
    }

    val size: Int get() = synchronized(this) { lines.size }
}
