package dev.uatu.sidecar.android

import dev.uatu.sidecar.dump
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.ValueSource

class UiAutomatorDumpTest {
    private fun parsed(name: String) = UiAutomatorDump.parse(dump(name))
    private fun UiDump.all() = windows.flatMap { it.descendantsAndSelf().toList() }
    private fun UiDump.byText(text: String) = all().single { it.text == text }

    @Test
    fun `the real dump parses with every node and attribute`() {
        val dump = parsed("openweather-home.xml")
        assertEquals(110, dump.nodeCount)
        assertEquals(0, dump.rotation)
        val root = dump.windows.single()
        assertEquals("android.widget.FrameLayout", root.className)
        assertEquals("uk.co.openweather", root.packageName)
        assertEquals(Rect(0, 0, 1080, 2424), root.bounds)
        assertEquals(0, root.drawingOrder)
        assertEquals("", root.hint)
        assertEquals(0, root.index)

        val content = dump.all().single { it.resourceId == "android:id/content" }
        assertEquals(Rect(0, 142, 1080, 2361), content.bounds)
        val humidity = dump.byText("Humidity: 72%")
        assertEquals("android.widget.TextView", humidity.className)
        assertEquals("47 °F", dump.byText("47 °F").text)
        assertEquals(1, dump.all().count { it.className == "android.widget.HorizontalScrollView" && it.scrollable })
        assertTrue(dump.all().all { it.enabled && it.other.isEmpty() })
    }

    @Test
    fun `the proto root is what the host reads`() {
        val dump = parsed("openweather-home.xml")
        val root = dump.rootProto(Rect(0, 0, 1080, 2424))
        fun count(node: uatu.driver.v1.DriverOuterClass.Node): Int = 1 + node.childrenList.sumOf { count(it) }
        assertEquals(110, count(root))
        assertEquals("uk.co.openweather", root.`package`)
        assertEquals(2424, root.bounds.bottom)
        assertTrue(root.enabled)
    }

    @Test
    fun `an Android 4 dump without resource-id, drawing-order or hint parses`() {
        val dump = parsed("android-4-launcher.xml")
        assertEquals(5, dump.nodeCount)
        val phone = dump.byText("Phone")
        assertEquals("", phone.resourceId)
        assertNull(phone.drawingOrder)
        assertNull(phone.hint)
        assertTrue(phone.clickable && phone.longClickable && phone.focusable && !phone.focused)
        assertEquals(Rect(24, 1000, 168, 1140), phone.bounds)
        val apps = dump.all().single { it.contentDescription == "Apps" }
        assertTrue(apps.focused && apps.selected)
        assertFalse(dump.byText("Browser").enabled)
        assertEquals(2, dump.byText("Browser").index)
    }

    @Test
    fun `escaped entities and control characters come out as the text on screen`() {
        val dump = parsed("entities.xml")
        val title = dump.all().single { it.resourceId == "app.folio:id/title" }
        assertEquals("Tom & Jerry <3 > \"quoted\" 'single'", title.text)
        assertEquals("café €5 £", title.contentDescription)
        assertEquals("line one\nline two\ttabbed", dump.all().single { it.resourceId == "app.folio:id/multiline" }.text)
        val control = dump.all().single { it.resourceId == "app.folio:id/control" }
        assertEquals("bell\uFFFDhere", control.text) // &#7; is not XML 1.0
        assertEquals("raw\uFFFDhere", control.contentDescription) // nor is a raw U+0001
        val pin = dump.all().single { it.resourceId == "app.folio:id/pin" }
        assertTrue(pin.password && pin.focused && pin.checkable.not())
        assertEquals("PIN (4–6 digits) 🔒", pin.hint)
        assertEquals("••••••", pin.text)
    }

    @Test
    fun `unusual bounds are kept as reported, unreadable ones are absent`() {
        val dump = parsed("bounds.xml")
        assertEquals(Rect(-120, -300, 960, -20), dump.byText("above").bounds)
        assertTrue(dump.byText("empty").bounds!!.isEmpty)
        assertEquals(Rect(900, 800, 100, 700), dump.byText("reversed").bounds)
        assertTrue(dump.byText("reversed").bounds!!.isEmpty)
        assertEquals(Rect(0, 2500, 1080, 2700), dump.byText("below").bounds)
        assertNull(dump.byText("garbled").bounds)
        assertNull(dump.byText("huge").bounds)
        assertEquals(Rect(10, 20, 30, 40), dump.byText("spaced").bounds)
        // In the host's form a node without bounds has none (the host reads that as empty at the origin).
        val garbled = dump.windows.single().toProto().childrenList.single { it.text == "garbled" }
        assertFalse(garbled.hasBounds())
        assertTrue(dump.windows.single().scrollable)
    }

    @Test
    fun `several windows sit under one hierarchy root spanning the screen`() {
        val dump = parsed("two-windows.xml")
        assertEquals(2, dump.windows.size)
        val root = dump.rootProto(Rect(0, 0, 1080, 2400))
        assertEquals("hierarchy", root.className)
        assertEquals(1080, root.bounds.right)
        assertEquals(listOf("app.folio", "com.google.android.permissioncontroller"), root.childrenList.map { it.`package` })
        assertEquals("Allow", root.getChildren(1).getChildren(0).text)
    }

    @Test
    fun `rotation and attributes of other versions are kept`() {
        assertEquals(1, parsed("rotated.xml").rotation)
        val extra = parsed("extra-attributes.xml")
        val fab = extra.all().single { it.resourceId == "app.folio:id/fab" }
        assertEquals(mapOf("NAF" to "true", "visible-to-user" to "false", "display-id" to "0"), fab.other)
        assertEquals(mapOf("visible-to-user" to "true", "display-id" to "0"), extra.windows.single().other)
        // The host gets them as the node's attributes, with the dump's other attributes no field carries.
        val attributes = extra.windows.single().toProto().attributesMap
        assertEquals("true", attributes["visible-to-user"])
        assertEquals("false", attributes["long-clickable"])
        assertEquals("", extra.windows.single().toProto().role)
    }

    @Test
    fun `text around the XML is ignored, in the tty and in the file forms`() {
        val xml = dump("android-4-launcher.xml")
        for (output in listOf("${xml}UI hierchary dumped to: /dev/tty\n", "UI hierchary dumped to: /data/local/tmp/d.xml\n$xml")) {
            val answer = UiAutomatorDump.readAnswer(output)
            assertEquals(5, assertInstanceOf(UiAutomatorDump.Answer.Screen::class.java, answer).dump.nodeCount)
        }
    }

    @ParameterizedTest
    @ValueSource(
        strings = [
            "ERROR: could not get idle state.",
            "ERROR: null root node returned by UiTestAutomationBridge.",
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />UI hierchary dumped to: /dev/tty",
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"></hierarchy>",
        ],
    )
    fun `idle-state errors and empty dumps are busy answers, asked again`(output: String) {
        assertInstanceOf(UiAutomatorDump.Answer.Busy::class.java, UiAutomatorDump.readAnswer(output))
    }

    @ParameterizedTest
    @ValueSource(
        strings = [
            "",
            "/system/bin/sh: uiautomator: inaccessible or not found",
            "java.io.FileNotFoundException: /dev/tty: open failed: ENXIO (No such device or address)",
            "<hierarchy rotation=\"0\"><node index=\"0\" text=\"cut\"></hierarchy>",
        ],
    )
    fun `failures and broken XML are failed answers naming the problem`(output: String) {
        val answer = UiAutomatorDump.readAnswer(output)
        val failed = assertInstanceOf(UiAutomatorDump.Answer.Failed::class.java, answer)
        assertTrue(failed.reason.isNotBlank())
    }

    @Test
    fun `a truncated dump says where it broke`() {
        val cut = dump("openweather-home.xml").substring(0, 5000) + "</hierarchy>"
        val failed = assertInstanceOf(UiAutomatorDump.Answer.Failed::class.java, UiAutomatorDump.readAnswer(cut))
        assertTrue(failed.reason.contains("line 1, column"), failed.reason)
    }
}
