package dev.uatu.sidecar.adb

import kotlin.random.Random

/**
 * How long the fake device takes to answer a command. [INSTANT] answers at
 * once (unit tests, and tests about anything but time); [realistic] takes the
 * time devices take:
 *
 * - `uiautomator dump`: 1.2–3 s. It first waits for one second without an
 *   accessibility event (`UiAutomation.waitForIdle(1000, 10000)` in AOSP's
 *   `DumpCommand`), then walks the tree and writes the file. A screen that
 *   never settles ([neverIdleDumpMs]) takes the whole 10 s before it prints
 *   `ERROR: could not get idle state.`
 * - everything else that starts a program on the device (`input`, `am`, `pm`,
 *   `dumpsys`, `screencap`, `settings`): the program's start-up, which for the
 *   app_process-based ones (`input`, `am`, `pm`, `uiautomator`) is hundreds of
 *   milliseconds; ranges below.
 * - shell built-ins and small tools (`cat`, `rm`, `getprop`, `pidof`): tens of milliseconds.
 *
 * The ranges other than the dump's are this project's assumptions for a
 * mid-range phone, not measurements (docs/devices.md says so). Draws come from
 * a seeded generator: the same seed gives the same delays in the same order.
 */
class DeviceLatency private constructor(private val random: Random?) {
    /** The delay before [command] answers, in milliseconds; the dump's is apart ([dumpMs]). */
    fun commandMs(command: String): Long {
        val program = command.trim().substringBefore(' ')
        val range = when (program) {
            "input" -> 150L..400L
            "am", "pm", "cmd" -> 200L..800L
            "screencap" -> 300L..700L
            "dumpsys", "settings", "wm", "top" -> 80L..300L
            "logcat" -> 40L..150L
            else -> 10L..60L
        }
        return draw(range)
    }

    /** A dump of a screen that settles. */
    fun dumpMs(): Long = draw(1_200L..3_000L)

    /** A dump of a screen that never settles: uiautomator's global idle timeout. */
    val neverIdleDumpMs: Long get() = if (random == null) 0 else NEVER_IDLE_TIMEOUT_MS

    private fun draw(range: LongRange): Long = random?.let { synchronized(it) { it.nextLong(range.first, range.last + 1) } } ?: 0

    override fun toString() = if (random == null) "instant" else "realistic"

    companion object {
        const val NEVER_IDLE_TIMEOUT_MS = 10_000L

        val INSTANT = DeviceLatency(null)

        fun realistic(seed: Long = 1) = DeviceLatency(Random(seed))

        /** `instant` or `realistic[:SEED]`, as device.properties writes it. */
        fun parse(text: String): DeviceLatency? = when {
            text == "instant" -> INSTANT
            text == "realistic" -> realistic()
            text.startsWith("realistic:") -> text.removePrefix("realistic:").toLongOrNull()?.let(::realistic)
            else -> null
        }
    }
}
