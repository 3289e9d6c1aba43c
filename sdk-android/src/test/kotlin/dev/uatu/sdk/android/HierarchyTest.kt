package dev.uatu.sdk.android

import android.os.Looper
import dev.uatu.sdk.core.Bounds
import dev.uatu.sdk.core.Hierarchy
import dev.uatu.sdk.core.Node
import java.io.File
import java.time.Duration
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Test
import org.junit.runner.RunWith
import org.robolectric.Robolectric
import org.robolectric.RobolectricTestRunner
import org.robolectric.RuntimeEnvironment
import org.robolectric.Shadows.shadowOf
import org.robolectric.annotation.Config

/**
 * The hierarchy read from a real View layout (FormActivity and a dialog over it)
 * under Robolectric's framework code; screen 320x470 px at density 1.
 */
@RunWith(RobolectricTestRunner::class)
@Config(sdk = [34], application = DebugApp::class)
class HierarchyTest {
    private fun capture(): Hierarchy {
        val activity = Robolectric.buildActivity(FormActivity::class.java).setup().get()
        activity.showDialog()
        shadowOf(Looper.getMainLooper()).idleFor(Duration.ofMillis(100))
        val windows = ActivityWindows().also { it.onActivityStarted(activity) }
        return ViewHierarchySource(RuntimeEnvironment.getApplication(), windows).capture() ?: throw AssertionError("no hierarchy")
    }

    private fun Node.find(predicate: (Node) -> Boolean): Node? = descendants().firstOrNull(predicate)
    private fun Node.byId(id: String) = find { it.resourceId == id } ?: throw AssertionError("no node $id in\n$this")

    @Test
    fun `a real layout yields its shown views with screen bounds, and the dialog as a window above`() {
        val screen = capture()
        assertEquals(320 to 470, screen.screenWidth to screen.screenHeight)
        assertEquals(Bounds(0, 0, 320, 470), screen.root.bounds)
        val (activity, dialog) = screen.root.children.also { assertEquals("windows: activity, dialog", 2, it.size) }

        val edit = activity.byId("android:id/edit")
        assertEquals("android.widget.EditText", edit.className)
        assertEquals("note", edit.text)
        assertEquals(Bounds(10, 50, 310, 100), edit.bounds)
        assertTrue(edit.clickable && edit.enabled && edit.focused)
        assertEquals(mapOf("checkable" to "false", "focusable" to "true", "long-clickable" to "true", "password" to "false"), edit.attributes)

        val submit = activity.byId("android:id/button1")
        assertEquals("android.widget.Button", submit.className)
        assertEquals("Submit" to "Submit transaction", submit.text to submit.contentDescription)
        assertFalse("the button is disabled", submit.enabled)
        assertEquals(Bounds(10, 100, 310, 150), submit.bounds)

        assertEquals("the invisible view is left out", null, activity.find { it.resourceId == "android:id/empty" })
        assertEquals(Bounds(10, 10, 110, 40), activity.byId("android:id/title").bounds) // nested in a FrameLayout

        val list = activity.byId("android:id/list")
        assertEquals("android.widget.ListView", list.className)
        assertTrue("a list longer than its view scrolls", list.scrollable)
        assertEquals(Bounds(10, 170, 310, 370), list.bounds)
        assertEquals((0..4).map { "row_$it" }, list.children.map { it.contentDescription })
        assertEquals("the last row is clipped by the list", 370, list.children.last().bounds.bottom)
        assertTrue(list.children.all { it.resourceId == "android:id/text1" && it.text.startsWith("item ") })

        assertEquals("Delete the note?", dialog.byId("android:id/message").text)
        val delete = dialog.byId("android:id/button1")
        assertEquals("Delete", delete.text)
        assertTrue(delete.enabled && delete.clickable)
        assertTrue("every dialog node lies within its window", dialog.descendants().all { it.bounds.within(dialog.bounds) })
        assertTrue(screen.nodes().all { it.packageName == RuntimeEnvironment.getApplication().packageName })
    }

    /**
     * The capture as JSON is checked in (`src/test/resources/hierarchy/form_with_dialog.json`):
     * the host's test `cli/tests/all/sdk_hierarchy.rs` resolves its selectors on the same file. Run with
     * `-Duatu.updateFixtures=true` to rewrite it after a deliberate change, and review the diff.
     */
    @Test
    fun `the capture matches the fixture the host's selector test reads`() {
        val fixture = File("src/test/resources/hierarchy/form_with_dialog.json")
        val captured: JsonElement = capture().toJson()
        if (System.getProperty("uatu.updateFixtures") == "true") {
            fixture.parentFile.mkdirs()
            fixture.writeText(Json { prettyPrint = true }.encodeToString(JsonElement.serializer(), captured) + "\n")
        }
        assertEquals(Json.parseToJsonElement(fixture.readText()), captured)
    }

    private fun captureOf(activityClass: Class<out android.app.Activity>): Hierarchy? {
        val activity = Robolectric.buildActivity(activityClass).setup().get()
        shadowOf(Looper.getMainLooper()).idleFor(Duration.ofMillis(100))
        val windows = ActivityWindows().also { it.onActivityStarted(activity) }
        return ViewHierarchySource(RuntimeEnvironment.getApplication(), windows).capture()
    }

    @Test
    fun `content drawn without Views is read through its accessibility node provider`() {
        val screen = captureOf(VirtualNodesActivity::class.java) ?: throw AssertionError("no hierarchy")
        val keys = screen.root.find { it.className.endsWith("VirtualKeysView") || it.children.any { child -> child.text == "7" } }
            ?: throw AssertionError("no view holding the virtual keys in\n${screen.root}")
        assertEquals(listOf("7", "8"), keys.children.map { it.text })
        val seven = keys.children[0]
        assertEquals("app.virtual:id/key_7", seven.resourceId)
        assertEquals("android.widget.Button", seven.className)
        assertTrue(seven.clickable && seven.enabled)
        assertEquals(Bounds(10, 20, 60, 50), seven.bounds) // the view's place on screen, then the key's inside it
        assertEquals(listOf("eight"), keys.children[1].children.map { it.text })
        assertEquals(Bounds(65, 25, 105, 45), keys.children[1].children.single().bounds)
    }

    @Test
    fun `a window that is one opaque view gives no hierarchy, so the host uses the dump`() {
        assertEquals(null, captureOf(OpaqueActivity::class.java))
    }

    private fun Bounds.within(outer: Bounds) = left >= outer.left && top >= outer.top && right <= outer.right && bottom <= outer.bottom
}
