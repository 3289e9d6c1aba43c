package dev.uatu.sidecar.android

import uatu.driver.v1.DriverOuterClass.LogEntry
import uatu.driver.v1.DriverOuterClass.LogLevel

/**
 * `logcat -v monotonic` output: the default `threadtime` layout with the time
 * as seconds since boot, which is the device clock `device_time_ms` counts in:
 *
 * ```
 * --------- beginning of main
 *    26.813  1234  1250 I ActivityManager: Start proc 1234:app.folio/u0a123
 * ```
 */
object Logcat {
    private val LINE = Regex("""^\s*(\d+)\.(\d{1,6})\s+(\d+)\s+(\d+)\s+([VDIWEFA])\s(.*)$""")

    /** The log the sidecar follows: every buffer an app's problems show in, from now on. */
    const val FOLLOW = "logcat -v monotonic -b main,system,crash -T 1"

    /** The buffer of the lines that follow, from the headers logcat prints where the buffer changes. */
    fun bufferHeader(text: String): String? = listOf("--------- beginning of ", "--------- switch to ")
        .firstOrNull { text.startsWith(it) }?.let { text.removePrefix(it).trim() }

    /** One log line: who wrote it, when, how severe, and what. */
    data class Line(val timeMs: Long, val pid: Int, val level: LogLevel, val tag: String, val message: String) {
        fun toProto(): LogEntry = LogEntry.newBuilder().setTimeMs(timeMs).setLevel(level).setTag(tag).setMessage(message).build()
    }

    /** The filter-spec letter of the lowest level to keep (`*:W` keeps W, E, F). */
    fun levelLetter(level: LogLevel): Char = when (level) {
        LogLevel.LOG_LEVEL_DEBUG -> 'D'
        LogLevel.LOG_LEVEL_INFO -> 'I'
        LogLevel.LOG_LEVEL_WARN -> 'W'
        LogLevel.LOG_LEVEL_ERROR -> 'E'
        LogLevel.LOG_LEVEL_FATAL -> 'F'
        else -> 'V'
    }

    /** Whether [level] is [minLevel] or above (unspecified: everything). */
    fun atLeast(level: LogLevel, minLevel: LogLevel): Boolean = level.number >= levelOf(levelLetter(minLevel)).number

    /** A log line, or null for what is not one (buffer headers, blank lines). */
    fun line(text: String): Line? {
        val match = LINE.matchEntire(text.trimEnd('\r')) ?: return null
        val (seconds, fraction, pid, _, letter, rest) = match.destructured
        val timeMs = seconds.toLong() * 1000 + fraction.padEnd(3, '0').take(3).toLong()
        // "Tag     : message": the tag is padded to 8 columns; a tag may hold spaces, never ": ".
        val separator = rest.indexOf(": ")
        val (tag, message) = if (separator >= 0) rest.substring(0, separator).trim() to rest.substring(separator + 2)
        else rest.trim().removeSuffix(":") to ""
        return Line(timeMs, pid.toInt(), levelOf(letter.single()), tag, message)
    }

    /** The entries strictly after `sinceMs` at `minLevel` or above; lines that are not entries are skipped. */
    fun parse(output: String, sinceMs: Long, minLevel: LogLevel): List<LogEntry> =
        output.lineSequence().mapNotNull(::line).filter { it.timeMs > sinceMs && atLeast(it.level, minLevel) }.map { it.toProto() }.toList()

    private fun levelOf(letter: Char): LogLevel = when (letter) {
        'V' -> LogLevel.LOG_LEVEL_VERBOSE
        'D' -> LogLevel.LOG_LEVEL_DEBUG
        'I' -> LogLevel.LOG_LEVEL_INFO
        'W' -> LogLevel.LOG_LEVEL_WARN
        'E' -> LogLevel.LOG_LEVEL_ERROR
        else -> LogLevel.LOG_LEVEL_FATAL // 'F' and 'A' (assert)
    }
}
