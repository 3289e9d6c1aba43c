package dev.uatu.sidecar

import dev.uatu.sidecar.adb.AdbServerAddress
import dev.uatu.sidecar.adb.AdbServerDevice
import dev.uatu.sidecar.adb.AttachedDevice
import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.fakedevice.AdbServerProcess
import dev.uatu.sidecar.fakedevice.FakeAdbd
import io.grpc.Status
import io.grpc.StatusRuntimeException
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import uatu.driver.v1.DriverOuterClass.HealthRequest
import uatu.driver.v1.DriverOuterClass.HierarchyRequest
import uatu.driver.v1.DriverOuterClass.LaunchRequest
import uatu.driver.v1.DriverOuterClass.Point
import uatu.driver.v1.DriverOuterClass.TapRequest
import uatu.driver.v1.DriverOuterClass.TerminateRequest
import java.net.InetAddress
import java.net.ServerSocket

/** Each failure a person can act on reaches the host as a gRPC status with a message saying what to do. */
class ErrorMappingTest {
    private fun statusOf(call: () -> Unit): Status {
        val error = assertThrows(StatusRuntimeException::class.java) { call() }
        return error.status
    }

    private fun healthThrough(server: AdbServerAddress, serial: String?): Status {
        InProcessSidecar({ AdbServerDevice.connect(server, serial) }).use { sidecar ->
            return statusOf { sidecar.stub.health(HealthRequest.getDefaultInstance()) }
        }
    }

    /**
     * Through a real ADB server of the test's own: the devices it lists are fake
     * devices' adbds attached with `adb connect`, in the state each is left in.
     */
    @Test
    fun `a device that cannot be used is a status saying what to do`() {
        AdbServerProcess.start().use { server ->
            fun expect(serial: String?, code: Status.Code, advice: String) {
                val status = healthThrough(server.address, serial)
                assertEquals(code, status.code, status.description)
                assertTrue(status.description!!.contains(advice), status.description)
            }
            expect(null, Status.Code.FAILED_PRECONDITION, "no Android device is attached")

            FakeAdbd(folioDevice()).use { first ->
                server.connect(first.serial)
                expect("R58M123", Status.Code.FAILED_PRECONDITION, "device R58M123 is not attached (attached: ${first.serial})")
                FakeAdbd(folioDevice()).use { second ->
                    server.connect(second.serial)
                    expect(null, Status.Code.FAILED_PRECONDITION, "2 Android devices are attached (")
                    expect(null, Status.Code.FAILED_PRECONDITION, "and none was chosen: pick one with `--device android:SERIAL`")
                    server.adb("disconnect", second.serial)
                }
                first.goOffline()
                server.awaitState(first.serial, "offline")
                expect(first.serial, Status.Code.UNAVAILABLE, "device ${first.serial} is offline")
                server.adb("disconnect", first.serial)
            }

            FakeAdbd(folioDevice(), FakeAdbd.Options(auth = FakeAdbd.Auth.REFUSE)).use { locked ->
                server.adb("connect", locked.serial)
                server.awaitState(locked.serial, "unauthorized")
                expect(null, Status.Code.PERMISSION_DENIED, "accept the \"Allow USB debugging?\" prompt")
                server.adb("disconnect", locked.serial)
            }
        }
    }

    @Test
    fun `no ADB server is UNAVAILABLE saying how to start one`() {
        val closedPort = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
        val status = healthThrough(AdbServerAddress("127.0.0.1", closedPort), null)
        assertEquals(Status.Code.UNAVAILABLE, status.code)
        assertTrue(status.description!!.contains("adb start-server"), status.description)
    }

    @Test
    fun `the ADB server is found where adb looks for it`() {
        assertEquals(AdbServerAddress("localhost", 5037), AdbServerAddress.default(emptyMap()))
        assertEquals(AdbServerAddress("localhost", 5099), AdbServerAddress.default(mapOf("ANDROID_ADB_SERVER_PORT" to "5099")))
        assertEquals(
            AdbServerAddress("10.0.2.2", 5038),
            AdbServerAddress.default(mapOf("ANDROID_ADB_SERVER_ADDRESS" to "10.0.2.2", "ANDROID_ADB_SERVER_PORT" to "5038")),
        )
        // ADB_SERVER_SOCKET wins, as in adb itself.
        assertEquals(
            AdbServerAddress("build-box", 5037),
            AdbServerAddress.default(mapOf("ADB_SERVER_SOCKET" to "tcp:build-box:5037", "ANDROID_ADB_SERVER_PORT" to "5099")),
        )
        assertEquals(AdbServerAddress("::1", 5037), AdbServerAddress.parseSocket("tcp:[::1]:5037"))
        val unread = assertThrows(IllegalArgumentException::class.java) { AdbServerAddress.default(mapOf("ADB_SERVER_SOCKET" to "localfilesystem:/tmp/adb")) }
        assertTrue(unread.message!!.contains("expected tcp:HOST:PORT"), unread.message)
    }

    @Test
    fun `adb devices lines are read with their states`() {
        assertEquals(
            listOf(AttachedDevice("emulator-5554", "device"), AttachedDevice("R58M123", "unauthorized"), AttachedDevice("192.168.1.7:5555", "offline")),
            AdbServerDevice.parseDeviceList("emulator-5554\tdevice\nR58M123\tunauthorized\n192.168.1.7:5555\toffline\n\n"),
        )
    }

    @Test
    fun `an app that is not installed is NOT_FOUND with the install command`() {
        InProcessSidecar(folioDevice()).use { sidecar ->
            val launch = statusOf { sidecar.stub.launch(LaunchRequest.newBuilder().setBundleId("app.other").build()) }
            assertEquals(Status.Code.NOT_FOUND, launch.code)
            assertEquals("app app.other is not installed on emulator-5554: install the debug build with the uatu SDK (`adb -s emulator-5554 install path/to/app-debug.apk`)", launch.description)
            val terminate = statusOf { sidecar.stub.terminate(TerminateRequest.newBuilder().setBundleId("app.other").build()) }
            assertEquals(Status.Code.NOT_FOUND, terminate.code)
        }
    }

    @Test
    fun `a package name that is not one is INVALID_ARGUMENT before reaching the shell`() {
        val device = folioDevice()
        InProcessSidecar(device).use { sidecar ->
            val status = statusOf { sidecar.stub.launch(LaunchRequest.newBuilder().setBundleId("app; reboot").build()) }
            assertEquals(Status.Code.INVALID_ARGUMENT, status.code)
            assertFalse(device.commands.any { it.contains("reboot") })
        }
    }

    @Test
    fun `a device that does not answer in time is DEADLINE_EXCEEDED, and the call returns at the timeout`() {
        // The timeout bounds every command, the connection's too: long enough for those to be answered
        // at once on a busy machine, far below the hung one's minute.
        val device = folioDevice().on("input tap", shellReply("", delayMs = 60_000))
        InProcessSidecar(device, fastSettings.copy(commandTimeoutMs = 1_000)).use { sidecar ->
            val started = System.nanoTime()
            val status = statusOf { sidecar.stub.tap(TapRequest.newBuilder().setPoint(Point.newBuilder().setX(5).setY(5)).build()) }
            val tookMs = (System.nanoTime() - started) / 1_000_000
            assertEquals(Status.Code.DEADLINE_EXCEEDED, status.code)
            assertTrue(status.description!!.contains("`input tap 5 5` on emulator-5554 gave no answer within 1000 ms"), status.description)
            assertTrue(tookMs < 30_000, "returned after $tookMs ms, not at the timeout")
        }
    }

    @Test
    fun `a device lost mid-call is UNAVAILABLE and the next call connects again`() {
        var connections = 0
        val unplugged = folioDevice().on("uiautomator dump", ScriptedDevice.Reply.Disconnect("device 'emulator-5554' not found"))
        InProcessSidecar({ if (connections++ == 0) unplugged else folioDevice() }).use { sidecar ->
            val status = statusOf { sidecar.stub.hierarchy(HierarchyRequest.getDefaultInstance()) }
            assertEquals(Status.Code.UNAVAILABLE, status.code)
            assertTrue(status.description!!.contains("device 'emulator-5554' not found"), status.description)
            assertTrue(sidecar.stub.health(HealthRequest.getDefaultInstance()).ready)
            assertEquals(2, connections)
            assertTrue(unplugged.closed)
        }
    }

    @Test
    fun `a failing device command is INTERNAL quoting the device`() {
        val device = folioDevice().on("input tap", shellReply("", exitCode = 1, stderr = "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission"))
        InProcessSidecar(device).use { sidecar ->
            val status = statusOf { sidecar.stub.tap(TapRequest.newBuilder().setPoint(Point.newBuilder().setX(5).setY(5)).build()) }
            assertEquals(Status.Code.INTERNAL, status.code)
            assertTrue(status.description!!.contains("INJECT_EVENTS"), status.description)
        }
    }

    @Test
    fun `a refused reverse forward is UNAVAILABLE naming the socket and port`() {
        val device = folioDevice().apply { reverseRefusal = "reverse:forward failed: cannot bind listener: Address already in use" }
        InProcessSidecar(device, fastSettings.copy(agent = dev.uatu.sidecar.android.AgentForward(hostPort = 45999, token = null))).use { sidecar ->
            val status = statusOf { sidecar.stub.health(HealthRequest.getDefaultInstance()) }
            assertEquals(Status.Code.UNAVAILABLE, status.code)
            assertTrue(status.description!!.contains("cannot forward localabstract:uatu-agent on emulator-5554 to tcp:45999"), status.description)
            assertTrue(status.description!!.contains("Address already in use"))
            assertTrue(device.closed)
        }
    }

    @Test
    fun `a connection that fails is UNAVAILABLE with the cause`() {
        InProcessSidecar({ throw java.io.IOException("Command failed (host:transport:R58M123): device offline") }).use { sidecar ->
            val status = statusOf { sidecar.stub.health(HealthRequest.getDefaultInstance()) }
            assertEquals(Status.Code.UNAVAILABLE, status.code)
            assertTrue(status.description!!.contains("device offline"), status.description)
        }
    }
}
