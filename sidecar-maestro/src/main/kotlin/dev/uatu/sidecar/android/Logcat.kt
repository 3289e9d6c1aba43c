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

    /** The filter-spec letter of the lowest level to keep (`*:W` keeps W, E, F). */
    fun levelLetter(level: LogLevel): Char = when (level) {
        LogLevel.LOG_LEVEL_DEBUG -> 'D'
        LogLevel.LOG_LEVEL_INFO -> 'I'
        LogLevel.LOG_LEVEL_WARN -> 'W'
        LogLevel.LOG_LEVEL_ERROR -> 'E'
        LogLevel.LOG_LEVEL_FATAL -> 'F'
        else -> 'V'
    }

    fun command(pid: Int, minLevel: LogLevel): String = "logcat -d -v monotonic --pid=$pid '*:${levelLetter(minLevel)}'"

    /** The entries strictly after `sinceMs` at `minLevel` or above; lines that are not entries are skipped. */
    fun parse(output: String, sinceMs: Long, minLevel: LogLevel): List<LogEntry> {
        val lowest = levelOf(levelLetter(minLevel)).number
        return output.lineSequence().mapNotNull { line ->
            val match = LINE.matchEntire(line.trimEnd('\r')) ?: return@mapNotNull null
            val (seconds, fraction, _, _, letter, rest) = match.destructured
            val timeMs = seconds.toLong() * 1000 + fraction.padEnd(3, '0').take(3).toLong()
            val level = levelOf(letter.single())
            if (timeMs <= sinceMs || level.number < lowest) return@mapNotNull null
            // "Tag     : message": the tag is padded to 8 columns; a tag may hold spaces, never ": ".
            val separator = rest.indexOf(": ")
            val (tag, message) = if (separator >= 0) rest.substring(0, separator).trim() to rest.substring(separator + 2)
            else rest.trim().removeSuffix(":") to ""
            LogEntry.newBuilder().setTimeMs(timeMs).setLevel(level).setTag(tag).setMessage(message).build()
        }.toList()
    }

    private fun levelOf(letter: Char): LogLevel = when (letter) {
        'V' -> LogLevel.LOG_LEVEL_VERBOSE
        'D' -> LogLevel.LOG_LEVEL_DEBUG
        'I' -> LogLevel.LOG_LEVEL_INFO
        'W' -> LogLevel.LOG_LEVEL_WARN
        'E' -> LogLevel.LOG_LEVEL_ERROR
        else -> LogLevel.LOG_LEVEL_FATAL // 'F' and 'A' (assert)
    }
}
