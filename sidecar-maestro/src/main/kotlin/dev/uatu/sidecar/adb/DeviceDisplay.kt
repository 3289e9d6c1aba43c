package dev.uatu.sidecar.adb

import java.io.IOException

/**
 * A window the system puts over the app on the fake device, with the dump of
 * its content (written from UIAutomator's format, bundled with the fake device)
 * and how the window manager names it.
 */
enum class Overlay(
    val file: String,
    val packageName: String,
    /** AccessibilityWindowInfo's title, as `uiautomator dump --windows` prints it. */
    val title: String,
    /** AccessibilityWindowInfo's type. */
    val type: String,
    /** Whether it takes the input focus from the app (a dialog does, the keyboard does not). */
    val takesFocus: Boolean,
) {
    PERMISSION_DIALOG(
        "permission-dialog.xml", "com.google.android.permissioncontroller", "Permission", "TYPE_APPLICATION", takesFocus = true,
    ),
    KEYBOARD("keyboard.xml", "com.google.android.inputmethod.latin", "Gboard", "TYPE_INPUT_METHOD", takesFocus = false),
    ANR_DIALOG("anr-dialog.xml", "android", "Application Not Responding", "TYPE_APPLICATION", takesFocus = true),
}

/**
 * The XML `uiautomator dump` writes, built from the screens' dumps: one window
 * (`<hierarchy rotation="R">`, the active window only), or every window with
 * `--windows` (Android 13's `AccessibilityNodeInfoDumper.dumpWindowsToFile`:
 * `<displays><display id="0"><window …><hierarchy …>`, top-most window first).
 */
object DumpXml {
    const val HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"

    /** A window of an all-windows dump: its attributes and its content (a single-window dump). */
    data class Window(val title: String, val type: String, val focused: Boolean, val layer: Int, val content: String)

    /** The nodes inside a single-window dump's `<hierarchy>`. */
    fun nodesOf(dump: String): String {
        val start = dump.indexOf("<hierarchy")
        if (start < 0) throw IOException("not a UIAutomator dump")
        val open = dump.indexOf('>', start)
        if (dump[open - 1] == '/') return "" // <hierarchy rotation="0" />
        val close = dump.lastIndexOf("</hierarchy>")
        return dump.substring(open + 1, close)
    }

    fun single(nodes: String, rotation: Int): String = "$HEADER<hierarchy rotation=\"$rotation\">$nodes</hierarchy>"

    fun windows(windows: List<Window>, rotation: Int, width: Int, height: Int): String = buildString {
        append(HEADER).append("<displays><display id=\"0\">")
        windows.forEachIndexed { index, window ->
            append("<window index=\"$index\" title=\"${escape(window.title)}\" bounds=\"[0,0][$width,$height]\" ")
            append("active=\"${window.focused}\" focused=\"${window.focused}\" accessibility-focused=\"false\" ")
            append("id=\"${100 + index}\" layer=\"${window.layer}\" type=\"${window.type}\">")
            append("<hierarchy rotation=\"$rotation\">").append(nodesOf(window.content)).append("</hierarchy></window>")
        }
        append("</display></displays>")
    }

    private val BOUNDS = Regex("""bounds="\[(-?\d+),(-?\d+)]\[(-?\d+),(-?\d+)]"""")

    /**
     * A portrait dump laid out on the landscape screen (rotation 1 or 3): every
     * bound scaled from WIDTHxHEIGHT to HEIGHTxWIDTH. The fake app has one layout;
     * stretched, its elements stay inside the rotated screen, as a real app's do.
     */
    fun landscape(dump: String, width: Int, height: Int): String = BOUNDS.replace(dump) { match ->
        val (left, top, right, bottom) = match.destructured.toList().map(String::toLong)
        fun x(value: Long) = value * height / width
        fun y(value: Long) = value * width / height
        "bounds=\"[${x(left)},${y(top)}][${x(right)},${y(bottom)}]\""
    }

    private fun escape(text: String) = text.replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;")
}
