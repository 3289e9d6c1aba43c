package dev.uatu.sidecar

import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.android.AgentForward
import dev.uatu.sidecar.android.AndroidDriver
import dev.uatu.sidecar.android.DeviceOutput
import io.grpc.Status
import io.grpc.StatusRuntimeException
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import uatu.driver.v1.DriverOuterClass.*

/** Every RPC of driver.proto over a real gRPC channel, against the fake device. */
class DriverServiceTest {
    private val device = folioDevice()
    private val sidecar = InProcessSidecar(device)
    private val stub = sidecar.stub

    @AfterEach
    fun close() = sidecar.close()

    private fun point(x: Int, y: Int) = Point.newBuilder().setX(x).setY(y).build()
    private fun launch(clear: Boolean = false) =
        stub.launch(LaunchRequest.newBuilder().setBundleId("app.folio").setClearState(clear).build())

    private fun commandsAfter(action: () -> Unit): List<String> {
        val before = device.commands.size
        action()
        return device.commands.drop(before)
    }

    @Test
    fun `Launch resolves the launcher activity, restarts the app and returns the device clock`() {
        val commands = commandsAfter { assertTrue(launch().deviceTimeMs >= 4_837_420) }
        assertEquals(
            listOf(
                "pm path app.folio",
                "am force-stop app.folio",
                "dumpsys package app.folio",
                "pm grant app.folio android.permission.POST_NOTIFICATIONS",
                "cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER app.folio",
                "am start -n 'app.folio/.MainActivity'",
            ),
            commands.filterNot { it == "cat /proc/uptime" || it == "wm size" || it.startsWith("logcat") },
        )
    }

    @Test
    fun `Launch with clear state clears the data, and a named activity is started as given`() {
        val commands = commandsAfter {
            stub.launch(
                LaunchRequest.newBuilder().setBundleId("app.folio").setClearState(true).setLauncherActivity(".SettingsActivity").build(),
            )
        }
        assertTrue("pm clear app.folio" in commands, commands.toString())
        assertTrue("am start -n 'app.folio/.SettingsActivity'" in commands, commands.toString())
        assertFalse(commands.any { it.startsWith("cmd package resolve-activity") })
    }

    @Test
    fun `with --keep-data a launch asked to clear the state keeps the app's data`() {
        val keptDevice = folioDevice()
        InProcessSidecar(keptDevice, fastSettings.copy(clearData = false)).use { keeping ->
            keeping.stub.launch(LaunchRequest.newBuilder().setBundleId("app.folio").setClearState(true).build())
        }
        val commands = keptDevice.commands
        assertFalse(commands.any { it.startsWith("pm clear") }, commands.toString())
        assertTrue("am force-stop app.folio" in commands, commands.toString())
    }

    @Test
    fun `Launch of an app with no launcher activity says what to pass`() {
        device.on("resolve-activity", shellReply("No activity found\n"))
        val error = assertThrows(StatusRuntimeException::class.java) { launch() }
        assertEquals(Status.Code.FAILED_PRECONDITION, error.status.code)
        assertTrue(error.status.description!!.contains("launcher_activity"))
    }

    @Test
    fun `Launch fails with the device's words when am start fails`() {
        device.on("am start", shellReply("Starting: Intent { cmp=app.folio/.MainActivity }\nError type 3\nError: Activity class {app.folio/app.folio.MainActivity} does not exist.\n"))
        val error = assertThrows(StatusRuntimeException::class.java) { launch() }
        assertEquals(Status.Code.INTERNAL, error.status.code)
        assertTrue(error.status.description!!.contains("Error type 3"), error.status.description)
    }

    @Test
    fun `Terminate force-stops the app`() {
        launch()
        val commands = commandsAfter { stub.terminate(TerminateRequest.newBuilder().setBundleId("app.folio").build()) }
        assertEquals(listOf("pm path app.folio", "am force-stop app.folio"), commands)
    }

    @Test
    fun `Tap taps the point and off-screen points are not delivered`() {
        val tapped = stub.tap(TapRequest.newBuilder().setPoint(point(540, 1200)).build())
        assertTrue(tapped.delivered)
        assertTrue(tapped.deviceTimeMs > 0)
        assertEquals("input tap 540 1200", device.commands.last { it.startsWith("input") })

        val off = stub.tap(TapRequest.newBuilder().setPoint(point(1080, 10)).build())
        assertFalse(off.delivered)
        assertEquals("point (1080, 10) is off the 1080x2424 screen", off.detail)
        assertEquals(1, device.commands.count { it.startsWith("input") })
    }

    @Test
    fun `Tap without a point is an invalid argument`() {
        val error = assertThrows(StatusRuntimeException::class.java) { stub.tap(TapRequest.getDefaultInstance()) }
        assertEquals(Status.Code.INVALID_ARGUMENT, error.status.code)
    }

    @Test
    fun `TapSelector taps the centre of the element found in the dump`() {
        launch()
        val byId = stub.tapSelector(TapSelectorRequest.newBuilder().setResourceId("app.folio:id/add_account").build())
        assertTrue(byId.delivered, byId.detail)
        assertEquals("input tap 540 2225", device.commands.last { it.startsWith("input") })

        launch()
        assertTrue(stub.tapSelector(TapSelectorRequest.newBuilder().setText("Savings").build()).delivered)
        assertEquals("input tap 374 595", device.commands.last { it.startsWith("input") })

        launch()
        assertTrue(stub.tapSelector(TapSelectorRequest.newBuilder().setContentDescription("Account Current & bills").build()).delivered)
        assertEquals("input tap 540 420", device.commands.last { it.startsWith("input") })

        launch()
        assertTrue(stub.tapSelector(TapSelectorRequest.newBuilder().setResourceId("add_account").build()).delivered)
    }

    @Test
    fun `TapSelector answers what went wrong when nothing matches or the element is off screen`() {
        launch()
        val missing = stub.tapSelector(TapSelectorRequest.newBuilder().setText("Nope").build())
        assertFalse(missing.delivered)
        assertEquals("no element matches text `Nope`", missing.detail)

        device.setScreens(listOf(dump("bounds.xml")))
        val below = stub.tapSelector(TapSelectorRequest.newBuilder().setText("below").build())
        assertFalse(below.delivered)
        assertTrue(below.detail.contains("off screen") && below.detail.contains("[0,2500][1080,2700]"), below.detail)
        val empty = stub.tapSelector(TapSelectorRequest.newBuilder().setText("empty").build())
        assertFalse(empty.delivered)
        assertTrue(empty.detail.contains("no area"), empty.detail)
        assertFalse(device.commands.any { it.startsWith("input") })

        val none = assertThrows(StatusRuntimeException::class.java) { stub.tapSelector(TapSelectorRequest.getDefaultInstance()) }
        assertEquals(Status.Code.INVALID_ARGUMENT, none.status.code)
    }

    @Test
    fun `InputText types through input text, and refuses what it cannot type without the ADB keyboard`() {
        assertTrue(stub.inputText(InputTextRequest.newBuilder().setText("it's 50% off\nok").build()).delivered)
        assertEquals("input text 'it'\\''s%s50%%soff' && input keyevent 66 && input text 'ok'", device.commands.last())

        val refused = stub.inputText(InputTextRequest.newBuilder().setText("café").build())
        assertFalse(refused.delivered)
        assertTrue(refused.detail.contains("'é' (U+00E9)") && refused.detail.contains("ADB Keyboard"), refused.detail)
        assertFalse(device.commands.any { it.startsWith("am broadcast") })

        device.currentInputMethod = AndroidDriver.ADB_KEYBOARD_IME
        assertTrue(stub.inputText(InputTextRequest.newBuilder().setText("café").build()).delivered)
        assertEquals("am broadcast -a ADB_INPUT_B64 --es msg Y2Fmw6k=", device.commands.last())
    }

    @Test
    fun `Swipe and PressKey send input events`() {
        val swipe = SwipeRequest.newBuilder().setFrom(point(540, 2000)).setTo(point(540, 400)).setDurationMs(300).build()
        assertTrue(stub.swipe(swipe).delivered)
        assertEquals("input swipe 540 2000 540 400 300", device.commands.last())

        val keys = mapOf(Key.KEY_BACK to 4, Key.KEY_HOME to 3, Key.KEY_ENTER to 66, Key.KEY_TAB to 61, Key.KEY_UP to 19, Key.KEY_DOWN to 20, Key.KEY_LEFT to 21, Key.KEY_RIGHT to 22)
        for ((key, code) in keys) {
            assertTrue(stub.pressKey(PressKeyRequest.newBuilder().setKey(key).build()).delivered)
            assertEquals("input keyevent $code", device.commands.last())
        }
        val none = assertThrows(StatusRuntimeException::class.java) { stub.pressKey(PressKeyRequest.getDefaultInstance()) }
        assertEquals(Status.Code.INVALID_ARGUMENT, none.status.code)

        val offStart = stub.swipe(swipe.toBuilder().setFrom(point(-5, 10)).build())
        assertFalse(offStart.delivered)
    }

    @Test
    fun `Sleep lets device time pass`() {
        val before = stub.tap(TapRequest.newBuilder().setPoint(point(1, 1)).build()).deviceTimeMs
        val after = stub.sleep(SleepRequest.newBuilder().setDurationMs(120).build())
        assertTrue(after.delivered)
        assertTrue(after.deviceTimeMs - before >= 120, "${after.deviceTimeMs} - $before")
    }

    @Test
    fun `Screenshot returns the screencap PNG and its size`() {
        val shot = stub.screenshot(ScreenshotRequest.getDefaultInstance())
        assertArrayEquals(device.screencap, shot.png.toByteArray())
        assertEquals(270, shot.width)
        assertEquals(606, shot.height)
        assertEquals("screencap -p", device.commands.last())
    }

    @Test
    fun `Screenshot that is not a PNG is an error quoting the device`() {
        device.on("screencap", ScreenshotReplies.notPng)
        val error = assertThrows(StatusRuntimeException::class.java) { stub.screenshot(ScreenshotRequest.getDefaultInstance()) }
        assertEquals(Status.Code.INTERNAL, error.status.code)
        assertTrue(error.status.description!!.contains("not a PNG") && error.status.description!!.contains("Permission denial"))
    }

    @Test
    fun `Hierarchy is the current screen's dump with the screen size`() {
        launch()
        val hierarchy = stub.hierarchy(HierarchyRequest.getDefaultInstance())
        assertEquals(1080, hierarchy.screenWidth)
        assertEquals(2424, hierarchy.screenHeight)
        val texts = mutableListOf<String>()
        fun walk(node: Node) { if (node.text.isNotEmpty()) texts += node.text; node.childrenList.forEach(::walk) }
        walk(hierarchy.root)
        assertEquals(listOf("Accounts", "Current & bills", "£1,204.50", "Savings", "£12,000.00", "Holiday \"fund\"", "£310.00", "Add account"), texts)

        stub.tap(TapRequest.newBuilder().setPoint(point(540, 420)).build())
        val next = stub.hierarchy(HierarchyRequest.getDefaultInstance())
        assertEquals("Navigate up", next.root.getChildren(0).getChildren(0).getChildren(0).getChildren(0).contentDescription)
    }

    @Test
    fun `Hierarchy dumps every window to a file it removes first, and reads it back`() {
        launch()
        stub.hierarchy(HierarchyRequest.getDefaultInstance())
        val file = AndroidDriver.DUMP_FILE
        assertEquals(listOf("rm -f $file", "uiautomator dump --windows $file", "cat $file"), device.commands.takeLast(3))
    }

    @Test
    fun `an old dump file is never read as the screen when the new dump fails`() {
        launch()
        assertEquals("app.folio", stub.hierarchy(HierarchyRequest.getDefaultInstance()).root.`package`) // leaves its file
        // The next screen never settles (a clock ticking on it).
        stub.tap(TapRequest.newBuilder().setPoint(point(540, 420)).build())
        device.neverIdleScreens = setOf(device.shownScreen().first)
        // Without removing the file first, the device answers with the old screen: exit 0 and a screen.
        val stale = device.shell("uiautomator dump ${AndroidDriver.DUMP_FILE} && cat ${AndroidDriver.DUMP_FILE}")
        assertEquals(0, stale.exitCode)
        assertTrue("ERROR: could not get idle state." in stale.stderr && "Add account" in stale.stdout, stale.toString())
        // The sidecar removes it first and reads the error as no screen.
        val error = assertThrows(StatusRuntimeException::class.java) { stub.hierarchy(HierarchyRequest.getDefaultInstance()) }
        assertEquals(Status.Code.UNAVAILABLE, error.status.code)
        assertTrue(error.status.description!!.contains("could not get idle state"), error.status.description)
    }

    @Test
    fun `Hierarchy asks again while the device has no window to dump`() {
        launch()
        device.on(
            "uiautomator dump",
            shellReply("", stderr = "ERROR: null root node returned by UiTestAutomationBridge.\n"),
            shellReply("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />"),
            shellReply("UI hierchary dumped to: ${AndroidDriver.DUMP_FILE}\n" + builtinScreen("folio-accounts.xml")),
        )
        assertEquals("app.folio", stub.hierarchy(HierarchyRequest.getDefaultInstance()).root.`package`)
        assertEquals(3, device.commands.count { it.contains("uiautomator dump") })
    }

    @Test
    fun `Hierarchy gives up after its attempts with UNAVAILABLE, at once for a screen that never settles`() {
        device.on("uiautomator dump", shellReply("", stderr = "ERROR: null root node returned by UiTestAutomationBridge.\n"))
        val error = assertThrows(StatusRuntimeException::class.java) { stub.hierarchy(HierarchyRequest.getDefaultInstance()) }
        assertEquals(Status.Code.UNAVAILABLE, error.status.code)
        assertTrue(error.status.description!!.contains("null root node"))
        assertEquals(fastSettings.dumpAttempts, device.commands.count { it.contains("uiautomator dump") })

        // That answer took the device 10 s: asking again within the call would not help.
        val settles = folioDevice().on("uiautomator dump", shellReply("", stderr = "ERROR: could not get idle state.\n"))
        InProcessSidecar(settles).use { other ->
            val never = assertThrows(StatusRuntimeException::class.java) { other.stub.hierarchy(HierarchyRequest.getDefaultInstance()) }
            assertTrue(never.status.description!!.contains("could not get idle state"))
            assertEquals(1, settles.commands.count { it.contains("uiautomator dump") })
        }
    }

    @Test
    fun `after a rotation the screen size is swapped and taps across the landscape width are delivered`() {
        launch()
        assertFalse(stub.tap(TapRequest.newBuilder().setPoint(point(2000, 500)).build()).delivered, "off the portrait screen")
        device.happen("rotate")
        val hierarchy = stub.hierarchy(HierarchyRequest.getDefaultInstance())
        assertEquals(2424, hierarchy.screenWidth)
        assertEquals(1080, hierarchy.screenHeight)
        val tapped = stub.tap(TapRequest.newBuilder().setPoint(point(2000, 500)).build())
        assertTrue(tapped.delivered, tapped.detail)
        assertFalse(stub.tap(TapRequest.newBuilder().setPoint(point(500, 2000)).build()).delivered, "off the landscape screen")
    }

    @Test
    fun `RecentLogs returns the app's entries after a time at a level or above, from one logcat that keeps running`() {
        assertEquals(0, stub.recentLogs(RecentLogsRequest.getDefaultInstance()).entriesCount) // no app launched yet
        launch()
        // Read as the device writes it: the launch's own line comes in a moment after.
        val all = eventually { stub.recentLogs(RecentLogsRequest.newBuilder().setMinLevel(LogLevel.LOG_LEVEL_VERBOSE).build()).entriesList.takeIf { it.size == 6 } }
        assertEquals(listOf("ActivityThread", "Folio", "Folio", "Folio", "uatu.sdk", "ActivityThread"), all.map { it.tag })
        assertEquals(4_836_577, all[1].timeMs)
        assertEquals(LogLevel.LOG_LEVEL_DEBUG, all[1].level)
        assertEquals("accounts loaded: 3", all[1].message)

        val warnings = stub.recentLogs(RecentLogsRequest.newBuilder().setSinceMs(4_836_904).setMinLevel(LogLevel.LOG_LEVEL_WARN).build())
        assertEquals(listOf("balance mismatch: expected 1204.50, got 1204.05"), warnings.entriesList.map { it.message })
        assertEquals(LogLevel.LOG_LEVEL_ERROR, warnings.entriesList.single().level)
        assertEquals(1, device.commands.count { it.startsWith("logcat") }, "the log is read once, not again at each call")
        assertTrue(device.commands.none { it.startsWith("logcat -d") })
    }

    @Test
    fun `Metrics reads the app process from top, and zero when it is not running`() {
        assertEquals(0.0, stub.metrics(MetricsRequest.getDefaultInstance()).cpuPercent)
        launch()
        val metrics = stub.metrics(MetricsRequest.getDefaultInstance())
        assertEquals(12.5, metrics.cpuPercent)
        assertEquals(187L * 1024 * 1024, metrics.memoryBytes)
        stub.terminate(TerminateRequest.newBuilder().setBundleId("app.folio").build())
        assertEquals(0L, stub.metrics(MetricsRequest.getDefaultInstance()).memoryBytes)
    }

    @Test
    fun `Health says the device is ready, the driver and the platform`() {
        val health = stub.health(HealthRequest.getDefaultInstance())
        assertTrue(health.ready)
        assertEquals("android", health.platform)
        assertEquals("uatu-sidecar-maestro 0.1.0 (emulator-5554, Android SDK 34)", health.version)

        device.on("sys.boot_completed", shellReply("\n"))
        assertFalse(stub.health(HealthRequest.getDefaultInstance()).ready)
    }

    @Test
    fun `WaitForIdle on a still screen is idle after one dump, which Hierarchy answers with`() {
        launch()
        val idle = stub.waitForIdle(WaitForIdleRequest.newBuilder().setTimeoutMs(20_000).build())
        assertTrue(idle.idle)
        assertTrue(idle.deviceTimeMs > 0)
        assertEquals(1, device.commands.count { it.startsWith("uiautomator") })
        assertEquals("app.folio", stub.hierarchy(HierarchyRequest.getDefaultInstance()).root.`package`)
        assertEquals(1, device.commands.count { it.startsWith("uiautomator") })
    }
}

object ScreenshotReplies {
    val notPng = shellReply("Error: Permission denial: screencap needs READ_FRAME_BUFFER\n")
}

/** The agent socket's reverse forward and the launch extras. */
class AgentForwardTest {
    @Test
    fun `the reverse forward is set at connection, the app told the socket and token, and the forward removed at close`() {
        val device = folioDevice()
        val settings = fastSettings.copy(agent = AgentForward(hostPort = 45123, token = "t0k3n-'x'"))
        val sidecar = InProcessSidecar(device, settings)
        sidecar.stub.launch(LaunchRequest.newBuilder().setBundleId("app.folio").build())
        assertEquals(mapOf("localabstract:uatu-agent" to 45123), device.reverseForwards)
        val start = device.commands.single { it.startsWith("am start") }
        // The extras proto/agent.md §1a names; the default socket is not named.
        assertEquals("am start -n 'app.folio/.MainActivity' --es uatu.token 't0k3n-'\\''x'\\'''", start)
        sidecar.close()
        assertEquals(emptyMap<String, Int>(), device.reverseForwards)
        assertTrue(device.closed)
    }

    @Test
    fun `a socket other than the default is named in the launch`() {
        val device = folioDevice()
        val agent = AgentForward(hostPort = 45124, token = "t", deviceSocket = "localabstract:uatu-run-7")
        InProcessSidecar(device, fastSettings.copy(agent = agent)).use { sidecar ->
            sidecar.stub.launch(LaunchRequest.newBuilder().setBundleId("app.folio").build())
            val start = device.commands.single { it.startsWith("am start") }
            assertEquals("am start -n 'app.folio/.MainActivity' --es uatu.token 't' --es uatu.socket 'uatu-run-7'", start)
            assertEquals(mapOf("localabstract:uatu-run-7" to 45124), device.reverseForwards)
        }
    }
}

class DeviceOutputTest {
    @Test
    fun `wm size, uptime, pidof, resolve-activity and top are read as devices print them`() {
        assertEquals(1080 to 2424, DeviceOutput.screenSize("Physical size: 1080x2424\n"))
        assertEquals(720 to 1600, DeviceOutput.screenSize("Physical size: 1080x2400\nOverride size: 720x1600\n"))
        assertEquals(null, DeviceOutput.screenSize("error: no display"))
        assertEquals(4_837_420L, DeviceOutput.uptimeMs("4837.42 9561.80\n"))
        assertEquals(4242, DeviceOutput.pid("4242 4301\n"))
        assertEquals(null, DeviceOutput.pid(""))
        assertEquals("app.folio/.MainActivity", DeviceOutput.resolvedActivity("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\napp.folio/.MainActivity\n"))
        assertEquals(null, DeviceOutput.resolvedActivity("No activity found\n"))
        val toybox = "Tasks: 1 total\n  PID USER         PR  NI VIRT  RES  SHR S[%CPU] %MEM     TIME+ ARGS\n 4242 u0_a190      10 -10  14G 1.2G 109M S 33.3   5.1   0:04.11 app.folio\n"
        val (cpu, memory) = requireNotNull(DeviceOutput.topMetrics(toybox, 4242))
        assertEquals(33.3, cpu)
        assertEquals((1.2 * (1L shl 30)).toLong(), memory)
        assertEquals(7.0 to 98_304L * 1024, DeviceOutput.topMetrics("  PID %CPU   RES\n 77 7 98304\n", 77))
        assertEquals(null, DeviceOutput.topMetrics("  PID %CPU   RES\n", 77))
    }
}

/** How the fake device reads a launch and its selector's test-only options. */
class FakeDeviceLaunchTest {
    @Test
    fun `a launch's string extras are read back through the shell quoting`() {
        val token = "t0k3n-'x' y"
        val start = "am start -n 'app.folio/.MainActivity' --es uatu.token ${dev.uatu.sidecar.android.InputText.shellQuote(token)} --es uatu.socket plain"
        assertEquals(token, ScriptedDevice.extra(start, ScriptedDevice.EXTRA_TOKEN))
        assertEquals("plain", ScriptedDevice.extra(start, ScriptedDevice.EXTRA_SOCKET))
        assertEquals(null, ScriptedDevice.extra("am start -n 'app.folio/.MainActivity'", ScriptedDevice.EXTRA_TOKEN))
    }

    @Test
    fun `the selector takes the app-token option and refuses others by name`() {
        assertEquals("forged", ScriptedDevice.load("builtin?app-token=forged").appTokenOverride)
        assertEquals(setOf("app.folio"), ScriptedDevice.load("builtin").sdkApps)
        val error = assertThrows(java.io.IOException::class.java) { ScriptedDevice.load("builtin?app-tokn=x") }
        assertTrue(error.message!!.contains("unknown option app-tokn"), error.message)
    }
}
