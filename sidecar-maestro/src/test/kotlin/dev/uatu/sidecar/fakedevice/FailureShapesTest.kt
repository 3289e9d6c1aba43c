package dev.uatu.sidecar.fakedevice

import dev.uatu.sidecar.InProcessSidecar
import dev.uatu.sidecar.adb.AdbServerDevice
import dev.uatu.sidecar.adb.DeviceLatency
import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.android.AndroidDriver
import dev.uatu.sidecar.android.DriverSettings
import dev.uatu.sidecar.dump
import dev.uatu.sidecar.eventually
import dev.uatu.sidecar.fastSettings
import dev.uatu.sidecar.folioDevice
import io.grpc.Status
import io.grpc.StatusRuntimeException
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import org.junit.jupiter.api.io.TempDir
import uatu.driver.v1.DriverOuterClass.AppInfoRequest
import uatu.driver.v1.DriverOuterClass.AppProcessState
import uatu.driver.v1.DriverOuterClass.AppStatusRequest
import uatu.driver.v1.DriverOuterClass.FocusRequest
import uatu.driver.v1.DriverOuterClass.HealthRequest
import uatu.driver.v1.DriverOuterClass.HierarchyRequest
import uatu.driver.v1.DriverOuterClass.InstallRequest
import uatu.driver.v1.DriverOuterClass.LaunchRequest
import uatu.driver.v1.DriverOuterClass.LogLevel
import uatu.driver.v1.DriverOuterClass.Node
import uatu.driver.v1.DriverOuterClass.Point
import uatu.driver.v1.DriverOuterClass.RecentLogsRequest
import uatu.driver.v1.DriverOuterClass.TapRequest
import uatu.driver.v1.DriverOuterClass.WaitForIdleRequest
import uatu.driver.v1.DriverOuterClass.WindowKind

/**
 * What real devices do that a clean fake would not, each through the whole real
 * path: the sidecar's gRPC service, its device class, a real ADB server (of this
 * class's own), and the fake device's adbd speaking the transport protocol.
 */
@ExtendWith(AdbServerExtension::class)
class FailureShapesTest(private val server: AdbServerProcess) {
    private val closing = mutableListOf<AutoCloseable>()

    @AfterEach
    fun closeAll() {
        closing.asReversed().forEach { it.close() }
    }

    /** The sidecar driving [device], attached to the ADB server through its own adbd. */
    private fun sidecarFor(
        device: ScriptedDevice,
        settings: DriverSettings = fastSettings,
        options: FakeAdbd.Options = FakeAdbd.Options(),
    ): Pair<FakeAdbd, InProcessSidecar> {
        val daemon = FakeAdbd(device, options)
        closing += AutoCloseable { server.adb("disconnect", daemon.serial); daemon.close() }
        server.connect(daemon.serial)
        val sidecar = InProcessSidecar({ AdbServerDevice.connect(server.address, daemon.serial) }, settings).also { closing += it }
        return daemon to sidecar
    }

    private fun InProcessSidecar.launch() = stub.launch(LaunchRequest.newBuilder().setBundleId("app.folio").build())

    private fun InProcessSidecar.focus() = android.focus(FocusRequest.newBuilder().setBundleId("app.folio").build())

    private fun InProcessSidecar.status() = android.appStatus(AppStatusRequest.newBuilder().setBundleId("app.folio").build())

    private fun InProcessSidecar.hierarchy() = stub.hierarchy(HierarchyRequest.getDefaultInstance())

    private fun InProcessSidecar.tap(x: Int, y: Int) = stub.tap(TapRequest.newBuilder().setPoint(Point.newBuilder().setX(x).setY(y)).build())

    private fun texts(node: Node): List<String> = listOfNotNull(node.text.ifEmpty { null }) + node.childrenList.flatMap(::texts)

    private fun packages(node: Node): Set<String> = setOf(node.`package`) + node.childrenList.flatMap(::packages)

    @Test
    fun `a caller's deadline cuts a never-settling dump short, on the device too, and the next call does not wait for it`() {
        val device = folioDevice().apply {
            latency = DeviceLatency.realistic(seed = 5)
            neverIdleScreens = setOf("folio-accounts")
        }
        val (daemon, sidecar) = sidecarFor(device, fastSettings.copy(commandTimeoutMs = 30_000))
        sidecar.launch()
        // The host gives up after 3 s of the dump's 10: the sidecar stops waiting then and closes the
        // dump's stream (the device ends the command), and the next call does not queue behind it.
        val started = System.nanoTime()
        val cut = assertThrows(StatusRuntimeException::class.java) {
            sidecar.stub.withDeadlineAfter(3, TimeUnit.SECONDS).hierarchy(HierarchyRequest.getDefaultInstance())
        }
        assertEquals(Status.Code.DEADLINE_EXCEEDED, cut.status.code)
        val health = sidecar.stub.withDeadlineAfter(8, TimeUnit.SECONDS).health(HealthRequest.getDefaultInstance())
        assertTrue(health.ready)
        val tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
        assertTrue(tookMs < DeviceLatency.NEVER_IDLE_TIMEOUT_MS, "Health answered after $tookMs ms: it waited for the abandoned dump")
        eventually { daemon.abandoned.firstOrNull { "uiautomator dump" in it } }
    }

    @Test
    fun `a dump full of non-ASCII text cut at arbitrary bytes is read back exactly`() {
        val device = folioDevice().apply { setScreens(listOf(dump("non-ascii.xml")), listOf("non-ascii")) }
        val (_, sidecar) = sidecarFor(device, options = FakeAdbd.Options(chunking = Chunking.arbitrary(seed = 17, maxChunk = 5)))
        sidecar.launch()
        assertEquals(
            listOf("Überweisungen", "Girokonto — Ünïcödé", "€1.204,50", "貯蓄口座 🙂", "¥12,000", "Праздник «фонд»", "₹310.00", "Добавить счёт ✓"),
            texts(sidecar.hierarchy().root),
        )
    }

    @Test
    fun `after a rotation taps across the landscape screen are delivered`() {
        val device = folioDevice()
        val (_, sidecar) = sidecarFor(device)
        sidecar.launch()
        assertFalse(sidecar.tap(2_000, 500).delivered)
        device.happen("rotate")
        val focus = sidecar.focus()
        assertEquals(1, focus.rotation)
        assertEquals(2424 to 1080, focus.screenWidth to focus.screenHeight)
        assertTrue(sidecar.tap(2_000, 500).delivered)
        val hierarchy = sidecar.hierarchy()
        assertEquals(2424, hierarchy.screenWidth)
        assertTrue(hierarchy.root.bounds.right > 1080, "the app's window is laid out in landscape")
    }

    @Test
    fun `a permission dialog over the app is the focused window and in the hierarchy, unless the permission was granted at launch`() {
        val device = folioDevice()
        val (_, sidecar) = sidecarFor(device, fastSettings.copy(grantPermissions = false))
        sidecar.launch()
        val focus = sidecar.focus()
        assertEquals(WindowKind.WINDOW_KIND_SYSTEM_DIALOG, focus.kind)
        assertEquals("com.google.android.permissioncontroller", focus.`package`)
        val hierarchy = sidecar.hierarchy().root
        assertEquals("hierarchy", hierarchy.className)
        assertEquals(listOf("app.folio", "com.google.android.permissioncontroller"), hierarchy.childrenList.map { it.`package` })
        assertTrue("Allow Folio to send you notifications?" in texts(hierarchy))
        // Its Allow button dismisses it: the app is alone again.
        assertTrue(sidecar.tap(540, 1315).delivered)
        assertEquals(WindowKind.WINDOW_KIND_APP, sidecar.focus().kind)
        assertEquals("app.folio", sidecar.hierarchy().root.`package`)

        // By default the sidecar grants what the app requests before it starts: no dialog.
        val (_, granting) = sidecarFor(folioDevice())
        granting.launch()
        assertEquals(WindowKind.WINDOW_KIND_APP, granting.focus().kind)
        assertEquals("app.folio", granting.hierarchy().root.`package`)
    }

    @Test
    fun `the keyboard up is said by Focus and in the hierarchy, and BACK hides it`() {
        val device = folioDevice()
        val (_, sidecar) = sidecarFor(device)
        sidecar.launch()
        assertFalse(sidecar.focus().keyboardShown)
        device.happen("keyboard")
        val focus = sidecar.focus()
        assertTrue(focus.keyboardShown)
        assertEquals(WindowKind.WINDOW_KIND_APP, focus.kind, "the keyboard does not take the focus")
        assertEquals(setOf("app.folio", "com.google.android.inputmethod.latin"), sidecar.hierarchy().root.childrenList.map { it.`package` }.toSet())
        sidecar.stub.pressKey(uatu.driver.v1.DriverOuterClass.PressKeyRequest.newBuilder().setKey(uatu.driver.v1.DriverOuterClass.Key.KEY_BACK).build())
        assertFalse(sidecar.focus().keyboardShown)
    }

    @Test
    fun `an ANR is told apart, the process alive, the system saying ANR in the app, its dialog focused`() {
        val device = folioDevice()
        val (_, sidecar) = sidecarFor(device)
        sidecar.launch()
        assertEquals(AppProcessState.APP_PROCESS_STATE_FOREGROUND, sidecar.status().state)
        device.happen("anr")
        val status = eventually { sidecar.status().takeIf { it.state == AppProcessState.APP_PROCESS_STATE_NOT_RESPONDING } }
        assertEquals(4242, status.pid)
        assertTrue(status.detail.startsWith("ANR in app.folio") && "Input dispatching timed out" in status.detail, status.detail)
        assertEquals(WindowKind.WINDOW_KIND_NOT_RESPONDING, sidecar.focus().kind)
        assertTrue("Folio isn’t responding" in texts(sidecar.hierarchy().root))
    }

    @Test
    fun `an app left for the launcher is in the background, not crashed`() {
        val device = folioDevice()
        val (_, sidecar) = sidecarFor(device)
        sidecar.launch()
        device.happen("background")
        val status = sidecar.status()
        assertEquals(AppProcessState.APP_PROCESS_STATE_BACKGROUND, status.state)
        assertTrue("nexuslauncher" in status.detail, status.detail)
        assertEquals(WindowKind.WINDOW_KIND_OTHER_APP, sidecar.focus().kind)
        device.happen("foreground")
        assertEquals(AppProcessState.APP_PROCESS_STATE_FOREGROUND, sidecar.status().state)
    }

    @Test
    fun `a crash is told apart with its FATAL EXCEPTION and stack from the crash buffer, also in the app's logs`() {
        val device = folioDevice()
        val (_, sidecar) = sidecarFor(device)
        sidecar.launch()
        device.happen("crash")
        // The runtime writes the block line by line: read once its stack is there.
        val status = eventually { sidecar.status().takeIf { "Ledger.balance" in it.crash } }
        assertEquals(AppProcessState.APP_PROCESS_STATE_GONE, status.state)
        assertTrue(status.crash.startsWith("FATAL EXCEPTION: main\nProcess: app.folio, PID: 4242"), status.crash)
        assertTrue("java.lang.IllegalStateException: ledger out of balance" in status.crash && "at app.folio.ledger.Ledger.balance" in status.crash, status.crash)
        val logs = sidecar.stub.recentLogs(RecentLogsRequest.newBuilder().setMinLevel(LogLevel.LOG_LEVEL_ERROR).build()).entriesList
        assertTrue(logs.any { it.tag == "AndroidRuntime" && it.message == "FATAL EXCEPTION: main" }, "$logs")
    }

    @Test
    fun `a device that goes offline mid-run fails the next call naming the device`() {
        val device = folioDevice()
        val (daemon, sidecar) = sidecarFor(device)
        sidecar.launch()
        daemon.goOffline()
        val lost = assertThrows(StatusRuntimeException::class.java) { sidecar.hierarchy() }
        assertEquals(Status.Code.UNAVAILABLE, lost.status.code)
        assertTrue(daemon.serial in lost.status.description!!, lost.status.description)
        // And again while it stays away: the device is not attached, and the message says which.
        val again = assertThrows(StatusRuntimeException::class.java) { sidecar.stub.health(HealthRequest.getDefaultInstance()) }
        assertTrue(daemon.serial in again.status.description!!, again.status.description)
    }

    @Test
    fun `the package manager says whether the app is a debug build and which of its runtime permissions are granted`() {
        fun InProcessSidecar.appInfo() = android.appInfo(AppInfoRequest.newBuilder().setBundleId("app.folio").build())
        val (_, keeping) = sidecarFor(folioDevice(), fastSettings.copy(grantPermissions = false))
        keeping.launch()
        val debug = keeping.appInfo()
        assertTrue(debug.debuggable)
        assertEquals(listOf("android.permission.POST_NOTIFICATIONS"), debug.requestedPermissionsList)
        assertEquals(emptyList<String>(), debug.grantedPermissionsList)
        assertFalse(debug.grantsPermissions)

        val (_, granting) = sidecarFor(folioDevice().apply { releaseBuilds = setOf("app.folio") })
        granting.launch()
        val release = granting.appInfo()
        assertFalse(release.debuggable)
        assertEquals(listOf("android.permission.POST_NOTIFICATIONS"), release.grantedPermissionsList)
        assertTrue(release.grantsPermissions)

        val missing = assertThrows(StatusRuntimeException::class.java) {
            granting.android.appInfo(AppInfoRequest.newBuilder().setBundleId("app.absent").build())
        }
        assertEquals(Status.Code.NOT_FOUND, missing.status.code)
    }

    @Test
    fun `an APK is pushed through the sync service and installed with the package manager`(@TempDir dir: Path) {
        val device = folioDevice().apply { installablePackage = "app.notes" }
        val (_, sidecar) = sidecarFor(device)
        val apk = dir.resolve("notes.apk")
        Files.write(apk, byteArrayOf('P'.code.toByte(), 'K'.code.toByte(), 3, 4) + ByteArray(70_000) { it.toByte() })
        assertEquals("Success", sidecar.android.install(InstallRequest.newBuilder().setApkPath(apk.toString()).build()).detail)
        assertTrue("app.notes" in device.installedPackages)
        assertEquals(null, device.fileOrNull("/data/local/tmp/uatu-install.apk"), "the pushed APK was left on the device")

        Files.write(dir.resolve("not.apk"), "plain text".toByteArray())
        val refused = assertThrows(StatusRuntimeException::class.java) {
            sidecar.android.install(InstallRequest.newBuilder().setApkPath(dir.resolve("not.apk").toString()).build())
        }
        assertEquals(Status.Code.FAILED_PRECONDITION, refused.status.code)
        assertTrue("INSTALL_PARSE_FAILED_NOT_APK" in refused.status.description!!, refused.status.description)
    }
}
