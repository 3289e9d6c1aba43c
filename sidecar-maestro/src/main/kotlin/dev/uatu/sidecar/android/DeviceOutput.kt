package dev.uatu.sidecar.android

import java.io.ByteArrayInputStream
import java.io.IOException
import javax.imageio.ImageIO

/** Small readers of what Android shell commands print. */
object DeviceOutput {
    /** `wm size`: "Physical size: 1080x2424", and "Override size: ..." when set (which wins). */
    fun screenSize(output: String): Pair<Int, Int>? {
        val sizes = Regex("""(Physical|Override) size:\s*(\d+)x(\d+)""").findAll(output)
            .associate { it.groupValues[1] to (it.groupValues[2].toInt() to it.groupValues[3].toInt()) }
        return sizes["Override"] ?: sizes["Physical"]
    }

    /** `/proc/uptime`: seconds since boot, as milliseconds. */
    fun uptimeMs(output: String): Long? =
        output.trim().substringBefore(' ').toBigDecimalOrNull()?.movePointRight(3)?.toLong()

    /** `pidof PACKAGE`: the first pid, or null when the app is not running. */
    fun pid(output: String): Int? = output.trim().split(Regex("\\s+")).firstOrNull()?.toIntOrNull()

    /** `cmd package resolve-activity --brief`: the last line naming a component (`pkg/.Activity`). */
    fun resolvedActivity(output: String): String? =
        output.lines().map { it.trim() }.lastOrNull { it.contains('/') && !it.contains(' ') }

    /**
     * `top -b -n 1 -p PID -o PID,%CPU,RES` (toybox top, Android 8+): CPU percent
     * and resident memory in bytes of the process `pid`. RES is in KiB unless it
     * has a K/M/G/T suffix.
     */
    fun topMetrics(output: String, pid: Int): Pair<Double, Long>? {
        val lines = output.lines().map { it.trim() }.filter { it.isNotEmpty() }
        val header = lines.firstOrNull { it.split(Regex("\\s+")).contains("PID") } ?: return null
        // toybox's default header squeezes the state and the sorted column into one word: "S[%CPU]".
        val columns = header.split(Regex("\\s+")).flatMap { word ->
            if (word.startsWith("S[") && word.endsWith("]")) listOf("S", word.removePrefix("S[").removeSuffix("]")) else listOf(word)
        }
        val cpuColumn = columns.indexOfFirst { it == "%CPU" }
        val resColumn = columns.indexOfFirst { it == "RES" || it == "RSS" }
        val pidColumn = columns.indexOf("PID")
        if (cpuColumn < 0 || resColumn < 0) return null
        val row = lines.map { it.split(Regex("\\s+")) }.firstOrNull { it.getOrNull(pidColumn) == pid.toString() } ?: return null
        val cpu = row.getOrNull(cpuColumn)?.removeSuffix("%")?.toDoubleOrNull() ?: return null
        val memory = row.getOrNull(resColumn)?.let(::memoryBytes) ?: return null
        return cpu to memory
    }

    private fun memoryBytes(text: String): Long? {
        val unit = text.last().uppercaseChar()
        val multiplier = when (unit) {
            'K' -> 1L shl 10
            'M' -> 1L shl 20
            'G' -> 1L shl 30
            'T' -> 1L shl 40
            else -> null
        }
        val number = (if (multiplier != null) text.dropLast(1) else text).toDoubleOrNull() ?: return null
        return (number * (multiplier ?: 1024L)).toLong()
    }

    /** What the window manager and the input method service say about the screen now. */
    data class WindowState(
        /** The title of the window with the input focus (`pkg/activity`, `Application Not Responding: pkg`, `StatusBar`). */
        val focusedWindow: String?,
        /** The component of the focused app's activity (`pkg/.Activity`). */
        val focusedApp: String?,
        /** The display's size now (rotated when the device is). */
        val size: Pair<Int, Int>?,
        val rotation: Int,
        val keyboardShown: Boolean,
    )

    private val CURRENT_FOCUS = Regex("""mCurrentFocus=Window\{\S+ u\d+ (.*)}""")
    private val FOCUSED_APP = Regex("""mFocusedApp=(?:AppWindowToken\{\S+ token=Token\{\S+ )?ActivityRecord\{\S+ u\d+ (\S+)""")
    private val DISPLAY_SIZE = Regex("""\bcur=(\d+)x(\d+)""")
    private val ROTATION = Regex("""\bmRotation=(?:ROTATION_)?(\d+)""")

    /**
     * `dumpsys window displays` (Android 10+; `mCurrentFocus`, `mFocusedApp`, the
     * display's `cur=WxH` and its `mRotation`, printed as `1` or `ROTATION_90`) and
     * `dumpsys input_method` (`mInputShown`), one after the other.
     */
    fun windowState(output: String): WindowState {
        val rotation = ROTATION.find(output)?.groupValues?.get(1)?.toIntOrNull()?.let { if (it >= 90) it / 90 else it } ?: 0
        return WindowState(
            focusedWindow = CURRENT_FOCUS.find(output)?.groupValues?.get(1)?.trim()?.takeIf { it != "null" },
            focusedApp = FOCUSED_APP.find(output)?.groupValues?.get(1),
            size = DISPLAY_SIZE.find(output)?.let { it.groupValues[1].toInt() to it.groupValues[2].toInt() },
            rotation = rotation,
            keyboardShown = output.contains("mInputShown=true"),
        )
    }

    private val RUNTIME_PERMISSION = Regex("""^\s+([\w.]+): granted=(true|false)""")

    /**
     * `dumpsys package PKG`: the runtime permissions the app requests and whether
     * each is granted (the lines under `runtime permissions:`; the install-time
     * ones above them are granted at install and not listed there).
     */
    fun runtimePermissions(output: String): Map<String, Boolean> {
        val permissions = LinkedHashMap<String, Boolean>()
        var inRuntime = false
        for (line in output.lines()) {
            when {
                line.trim() == "runtime permissions:" -> inRuntime = true
                inRuntime -> {
                    val match = RUNTIME_PERMISSION.find(line)
                    if (match == null) inRuntime = false else permissions[match.groupValues[1]] = match.groupValues[2] == "true"
                }
            }
        }
        return permissions
    }

    /**
     * `dumpsys package PKG`: whether the package's flags (`flags=[ … ]`, `pkgFlags=[ … ]`
     * on older versions) include `DEBUGGABLE`, as a debug build's do.
     */
    fun debuggable(output: String): Boolean = output.lineSequence().map { it.trim() }
        .filter { it.startsWith("flags=[") || it.startsWith("pkgFlags=[") }
        .any { line -> line.substringAfter('[').substringBefore(']').split(' ').any { it == "DEBUGGABLE" } }

    /** Width and height of a PNG (read from its header only); null when `bytes` is not a PNG. */
    fun pngSize(bytes: ByteArray): Pair<Int, Int>? {
        val input = ImageIO.createImageInputStream(ByteArrayInputStream(bytes)) ?: return null
        input.use {
            val reader = ImageIO.getImageReaders(input).asSequence().firstOrNull { it.formatName.equals("png", ignoreCase = true) }
                ?: return null
            return try {
                reader.input = input
                reader.getWidth(0) to reader.getHeight(0)
            } catch (e: IOException) {
                null
            } finally {
                reader.dispose()
            }
        }
    }
}
