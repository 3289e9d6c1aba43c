package dev.uatu.sidecar.android

import uatu.driver.v1.DriverOuterClass.Bounds
import uatu.driver.v1.DriverOuterClass.Node
import java.io.StringReader
import javax.xml.stream.XMLInputFactory
import javax.xml.stream.XMLStreamConstants
import javax.xml.stream.XMLStreamException
import javax.xml.stream.XMLStreamReader

/** A rectangle in device pixels: left/top inclusive, right/bottom exclusive. */
data class Rect(val left: Int, val top: Int, val right: Int, val bottom: Int) {
    val centreX: Int get() = left + (right - left) / 2
    val centreY: Int get() = top + (bottom - top) / 2
    val isEmpty: Boolean get() = right <= left || bottom <= top
}

/**
 * One `<node>` of a UIAutomator dump with every attribute it carries. The
 * attributes every Android version prints are fields; the ones only some
 * versions print are nullable (`drawing-order` and `hint` came with Android 7
 * and 8); anything else (`visible-to-user`, `NAF`, `display-id`, ...) is kept in [other].
 */
data class UiElement(
    val index: Int?,
    val text: String,
    val resourceId: String,
    val className: String,
    val packageName: String,
    val contentDescription: String,
    val checkable: Boolean,
    val checked: Boolean,
    val clickable: Boolean,
    val enabled: Boolean,
    val focusable: Boolean,
    val focused: Boolean,
    val scrollable: Boolean,
    val longClickable: Boolean,
    val password: Boolean,
    val selected: Boolean,
    /** Null when the dump's bounds could not be read. */
    val bounds: Rect?,
    val drawingOrder: Int?,
    val hint: String?,
    val other: Map<String, String>,
    val children: List<UiElement>,
) {
    fun descendantsAndSelf(): Sequence<UiElement> = sequence {
        yield(this@UiElement)
        for (child in children) yieldAll(child.descendantsAndSelf())
    }

    /** driver.proto's node: the attributes the host reads. */
    fun toProto(): Node = Node.newBuilder().also { node ->
        node.resourceId = resourceId
        node.text = text
        node.contentDescription = contentDescription
        node.className = className
        node.`package` = packageName
        node.clickable = clickable
        node.enabled = enabled
        node.checked = checked
        node.focused = focused
        node.selected = selected
        node.scrollable = scrollable
        bounds?.let { node.bounds = it.toProto() }
        node.putAllAttributes(attributes())
        children.forEach { node.addChildren(it.toProto()) }
    }.build()

    /**
     * What the dump says of the node that driver.proto's fields do not carry, by
     * the dump's attribute names (`index`, `checkable`, `focusable`, `long-clickable`,
     * `password`, and where the version writes them `drawing-order`, `hint`, `NAF`…).
     * A dump has no role: Node's `role` stays empty.
     */
    fun attributes(): Map<String, String> = buildMap {
        index?.let { put("index", it.toString()) }
        put("checkable", checkable.toString())
        put("focusable", focusable.toString())
        put("long-clickable", longClickable.toString())
        put("password", password.toString())
        drawingOrder?.let { put("drawing-order", it.toString()) }
        hint?.let { put("hint", it) }
        putAll(other)
    }
}

fun Rect.toProto(): Bounds = Bounds.newBuilder().setLeft(left).setTop(top).setRight(right).setBottom(bottom).build()

/**
 * One window of a dump: its root node and, in an all-windows dump (`uiautomator
 * dump --windows`, Android 13+), what the accessibility service says of it. A
 * dump of the active window alone says nothing: [title] and [type] are empty.
 */
data class UiWindow(val root: UiElement, val title: String = "", val type: String = "", val focused: Boolean = false) {
    /** The status and navigation bars, accessibility overlays and the like, when they do not have the focus. */
    val isSystemDecoration: Boolean get() = type in DECORATIONS && !focused

    private companion object {
        val DECORATIONS = setOf("TYPE_SYSTEM", "TYPE_ACCESSIBILITY_OVERLAY", "TYPE_MAGNIFICATION_OVERLAY", "TYPE_SPLIT_SCREEN_DIVIDER")
    }
}

/** A parsed dump: its windows, bottom to top (usually one), and the screen rotation (0–3). */
data class UiDump(val rotation: Int, val uiWindows: List<UiWindow>) {
    /** The windows' root nodes, bottom to top. */
    val windows: List<UiElement> get() = uiWindows.map { it.root }

    val nodeCount: Int get() = windows.sumOf { it.descendantsAndSelf().count() }

    /**
     * The root the host sees: the window on screen alone when there is one besides
     * the system's decorations (the usual case: the app's), else a `hierarchy` node
     * spanning the screen holding every window that is not a decoration, bottom to
     * top: a dialog or the keyboard over the app, another app in front.
     */
    fun rootProto(screen: Rect): Node {
        val shown = uiWindows.filterNot { it.isSystemDecoration }.ifEmpty { uiWindows }
        shown.singleOrNull()?.let { return it.root.toProto() }
        return Node.newBuilder().setClassName("hierarchy").setEnabled(true).setBounds(screen.toProto())
            .addAllChildren(shown.map { it.root.toProto() }).build()
    }
}

class DumpFormatException(message: String, cause: Throwable? = null) : Exception(message, cause)

/**
 * Reads what `uiautomator dump` prints. Real devices add text around the XML
 * ("UI hierchary dumped to: /dev/tty", sic), answer with an error line while
 * the screen animates, or print a hierarchy with no node; [readAnswer] tells these apart.
 */
object UiAutomatorDump {
    /** What one `uiautomator dump` answered. */
    sealed interface Answer {
        data class Screen(val dump: UiDump) : Answer

        /** Worth asking again: the screen was busy (animating, no window yet). */
        data class Busy(val reason: String) : Answer

        /** The dump did not happen; asking again will not help (or the form is unsupported here). */
        data class Failed(val reason: String) : Answer
    }

    private val TRANSIENT_ERRORS = listOf(
        "could not get idle state",
        "null root node",
        "java.lang.IllegalStateException",
    )

    /**
     * What one dump answered. An `ERROR` line means no screen, whatever else the
     * output holds: uiautomator exits 0 after one, and a file it did not write may
     * still hold an older screen.
     */
    fun readAnswer(output: String): Answer {
        val errorLine = errorLine(output)
        val xml = if (errorLine == null) extractXml(output) else null
        if (xml == null) {
            val reason = errorLine ?: output.trim().ifEmpty { "no output" }
            return if (TRANSIENT_ERRORS.any { reason.contains(it, ignoreCase = true) }) {
                Answer.Busy(reason)
            } else {
                Answer.Failed(reason.take(300))
            }
        }
        val dump = try {
            parse(xml)
        } catch (e: DumpFormatException) {
            return Answer.Failed(e.message ?: "unreadable dump")
        }
        return if (dump.windows.isEmpty()) Answer.Busy("the dump holds no node (the screen is changing)") else Answer.Screen(dump)
    }

    /** The `ERROR…` line uiautomator printed, if any. */
    fun errorLine(output: String): String? = output.lineSequence().map { it.trim() }.firstOrNull { it.startsWith("ERROR") }

    /** The XML document inside a shell answer (a window's `<hierarchy>` or all windows' `<displays>`), or null when there is none. */
    fun extractXml(output: String): String? {
        val start = output.indexOf("<?xml").takeIf { it >= 0 }
            ?: output.indexOf("<displays").takeIf { it >= 0 }
            ?: output.indexOf("<hierarchy").takeIf { it >= 0 }
            ?: return null
        val displays = output.lastIndexOf("</displays>")
        if (displays >= 0) return output.substring(start, displays + "</displays>".length)
        val closing = output.lastIndexOf("</hierarchy>")
        val end = if (closing >= 0) {
            closing + "</hierarchy>".length
        } else {
            // `<hierarchy rotation="0" />`: an empty dump.
            val selfClosed = Regex("<hierarchy[^>]*/>").find(output, start) ?: return null
            selfClosed.range.last + 1
        }
        return output.substring(start, end)
    }

    fun parse(xml: String): UiDump =
        try {
            parseXml(xml)
        } catch (e: XMLStreamException) {
            // Most dumps are well-formed; only a failing one pays for the clean-up, and is tried again.
            val cleaned = sanitise(xml)
            if (cleaned == xml) throw unreadable(e)
            try {
                parseXml(cleaned)
            } catch (again: XMLStreamException) {
                throw unreadable(again)
            }
        }

    private fun unreadable(e: XMLStreamException): DumpFormatException {
        val where = e.location?.let { " at line ${it.lineNumber}, column ${it.columnNumber}" } ?: ""
        return DumpFormatException("unreadable UIAutomator dump$where: ${e.message?.substringAfter("Message: ")}", e)
    }

    /**
     * A dump of the active window (`<hierarchy>`, whose top-level nodes are its
     * windows, bottom to top), or of every window (`<displays><display><window>`,
     * top-most first, each with its `<hierarchy>`), which becomes bottom to top.
     */
    private fun parseXml(xml: String): UiDump {
        val reader = newReader(xml)
        try {
            var rotation = 0
            var allWindows = false
            var window: UiWindow? = null // the attributes of the <window> being read
            val windows = mutableListOf<UiWindow>()
            while (reader.hasNext()) {
                when (reader.next()) {
                    XMLStreamConstants.START_ELEMENT -> when (reader.localName) {
                        "displays" -> allWindows = true
                        "window" -> window = UiWindow(
                            root = PLACEHOLDER,
                            title = reader.getAttributeValue(null, "title").orEmpty(),
                            type = reader.getAttributeValue(null, "type").orEmpty(),
                            focused = reader.getAttributeValue(null, "focused") == "true",
                        )
                        "hierarchy" -> rotation = reader.getAttributeValue(null, "rotation")?.toIntOrNull() ?: rotation
                        "node" -> {
                            val root = readNode(reader)
                            windows += window?.copy(root = root) ?: UiWindow(root)
                        }
                    }
                }
            }
            return UiDump(rotation, if (allWindows) windows.asReversed().toList() else windows)
        } finally {
            reader.close()
        }
    }

    /** Stands for a window's root until its `<node>` is read. */
    private val PLACEHOLDER = UiElement(
        null, "", "", "", "", "", false, false, false, false, false, false, false, false, false, false, null, null, null, emptyMap(), emptyList(),
    )

    /** Reads the `<node>` the reader is on, with its subtree, and leaves the reader after its end tag. */
    private fun readNode(reader: XMLStreamReader): UiElement {
        val attributes = HashMap<String, String>(32)
        var othersPresent = false
        for (i in 0 until reader.attributeCount) {
            val name = reader.getAttributeLocalName(i)
            attributes[name] = reader.getAttributeValue(i)
            if (name !in KNOWN) othersPresent = true
        }
        val children = mutableListOf<UiElement>()
        while (true) {
            when (reader.next()) {
                XMLStreamConstants.START_ELEMENT -> if (reader.localName == "node") children += readNode(reader) else skipElement(reader)
                XMLStreamConstants.END_ELEMENT -> return element(attributes, othersPresent, children)
                XMLStreamConstants.END_DOCUMENT -> throw DumpFormatException("the dump ends inside a node")
            }
        }
    }

    private fun skipElement(reader: XMLStreamReader) {
        var depth = 1
        while (depth > 0) {
            when (reader.next()) {
                XMLStreamConstants.START_ELEMENT -> depth++
                XMLStreamConstants.END_ELEMENT -> depth--
            }
        }
    }

    private val KNOWN = setOf(
        "index", "text", "resource-id", "class", "package", "content-desc", "checkable", "checked", "clickable",
        "enabled", "focusable", "focused", "scrollable", "long-clickable", "password", "selected", "bounds",
        "drawing-order", "hint",
    )

    private fun element(a: Map<String, String>, othersPresent: Boolean, children: List<UiElement>) = UiElement(
        index = a["index"]?.toIntOrNull(),
        text = a["text"].orEmpty(),
        resourceId = a["resource-id"].orEmpty(),
        className = a["class"].orEmpty(),
        packageName = a["package"].orEmpty(),
        contentDescription = a["content-desc"].orEmpty(),
        checkable = a.flag("checkable"),
        checked = a.flag("checked"),
        clickable = a.flag("clickable"),
        // A node that does not say is usable: old dumps omit `enabled` on some nodes.
        enabled = a["enabled"]?.let { it == "true" } ?: true,
        focusable = a.flag("focusable"),
        focused = a.flag("focused"),
        scrollable = a.flag("scrollable"),
        longClickable = a.flag("long-clickable"),
        password = a.flag("password"),
        selected = a.flag("selected"),
        bounds = a["bounds"]?.let(::parseBounds),
        drawingOrder = a["drawing-order"]?.toIntOrNull(),
        hint = a["hint"],
        other = if (othersPresent) a.filterKeys { it !in KNOWN } else emptyMap(),
        children = children,
    )

    private fun Map<String, String>.flag(name: String) = this[name] == "true"

    private val BOUNDS = Regex("""\[\s*(-?\d+)\s*,\s*(-?\d+)\s*]\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*]""")

    /** `[left,top][right,bottom]`; negative and reversed values are kept as the device reported them. */
    fun parseBounds(text: String): Rect? {
        val match = BOUNDS.matchEntire(text.trim()) ?: return null
        val (l, t, r, b) = match.destructured
        return try {
            Rect(l.toInt(), t.toInt(), r.toInt(), b.toInt())
        } catch (e: NumberFormatException) {
            null // beyond Int: not a screen position
        }
    }

    private val CHARACTER_REFERENCE = Regex("&#(x[0-9a-fA-F]+|[0-9]+);")

    /**
     * Makes a dump acceptable to an XML 1.0 parser: apps put control characters
     * in texts, which some Android versions write raw or as `&#1;`-style
     * references that XML 1.0 forbids. They become U+FFFD; the rest is untouched.
     */
    fun sanitise(xml: String): String {
        val referencesFixed = CHARACTER_REFERENCE.replace(xml) { match ->
            val body = match.groupValues[1]
            val code = if (body.startsWith("x")) body.drop(1).toIntOrNull(16) else body.toIntOrNull()
            if (code != null && isXmlChar(code)) match.value else "\uFFFD"
        }
        if (referencesFixed.all { isXmlChar(it.code) || it.isSurrogate() }) return referencesFixed
        return buildString(referencesFixed.length) {
            for (c in referencesFixed) append(if (isXmlChar(c.code) || c.isSurrogate()) c else '\uFFFD')
        }
    }

    private fun isXmlChar(code: Int) =
        code == 0x9 || code == 0xA || code == 0xD || code in 0x20..0xD7FF || code in 0xE000..0xFFFD || code in 0x10000..0x10FFFF

    private val factory: XMLInputFactory = XMLInputFactory.newFactory().apply {
        // A dump is data from a device: no DTDs, no external entities.
        setProperty(XMLInputFactory.SUPPORT_DTD, false)
        setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false)
        setProperty(XMLInputFactory.IS_COALESCING, true)
    }

    private fun newReader(xml: String): XMLStreamReader = synchronized(factory) { factory.createXMLStreamReader(StringReader(xml)) }
}
