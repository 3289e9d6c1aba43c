package dev.uatu.sidecar.fakedevice

import dev.uatu.sidecar.adb.AdbServerDevice
import dev.uatu.sidecar.folioDevice
import dev.uatu.sidecar.shellReply
import java.io.IOException
import java.net.InetAddress
import java.net.ServerSocket
import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import org.junit.jupiter.api.io.TempDir

/**
 * The fake device's adbd attached to a real ADB server (Debian's `adb`, a
 * server of this class's own on a free port), reached by the real `adb` client
 * and by the sidecar's own device class: the transport, each service, and the
 * failure shapes.
 */
@ExtendWith(AdbServerExtension::class)
class FakeAdbdTest(private val server: AdbServerProcess) {
    private val daemons = mutableListOf<FakeAdbd>()

    @AfterEach
    fun stopDaemons() {
        daemons.forEach { daemon ->
            server.adb("disconnect", daemon.serial)
            daemon.close()
        }
    }

    private fun attached(device: dev.uatu.sidecar.adb.ScriptedDevice = folioDevice(), options: FakeAdbd.Options = FakeAdbd.Options()): FakeAdbd {
        val daemon = FakeAdbd(device, options).also { daemons += it }
        server.connect(daemon.serial)
        return daemon
    }

    @Test
    fun `the real adb client runs a shell command on the fake device and gets its output and exit code`() {
        val daemon = attached()
        assertEquals(AdbServerProcess.Result(0, "34\n"), server.adb("-s", daemon.serial, "shell", "getprop", "ro.build.version.sdk"))
        val missing = server.adb("-s", daemon.serial, "shell", "no-such-tool")
        assertEquals(127, missing.exitCode, missing.output)
        assertTrue("no-such-tool: inaccessible or not found" in missing.output, missing.output)
    }

    @Test
    fun `the sidecar's device class reaches it through the server, for shell, exec and the device list`() {
        val device = folioDevice()
        val daemon = attached(device)
        assertTrue(AdbServerDevice.listDevices(server.address).any { it.serial == daemon.serial && it.state == "device" })
        AdbServerDevice.connect(server.address, daemon.serial).use { adb ->
            assertEquals("Physical size: 1080x2424\n", adb.shell("wm size").stdout)
            assertArrayEquals(device.screencap, adb.execOut("screencap -p"))
        }
        assertTrue(daemon.opened.any { it.startsWith("shell,v2,raw:wm size") }, "${daemon.opened}")
    }

    @Test
    fun `output cut at arbitrary bytes arrives whole`() {
        val device = folioDevice()
        val daemon = attached(device, FakeAdbd.Options(chunking = Chunking.arbitrary(seed = 7, maxChunk = 3)))
        AdbServerDevice.connect(server.address, daemon.serial).use { adb ->
            assertArrayEquals(device.screencap, adb.execOut("screencap -p"))
        }
    }

    @Test
    fun `non-ASCII output cut inside its characters is read back exactly by the sidecar`() {
        val text = "Überweisung €1.204,50 — 東京 ✓ 🙂 ".repeat(400)
        val device = folioDevice().on("cat /data/local/tmp/text", shellReply(text))
        val daemon = attached(device, FakeAdbd.Options(chunking = Chunking.arbitrary(seed = 11, maxChunk = 7)))
        AdbServerDevice.connect(server.address, daemon.serial).use { adb ->
            assertEquals(text, adb.shell("cat /data/local/tmp/text").stdout)
        }
    }

    @Test
    fun `adb push and pull go through the sync service`(@TempDir dir: Path) {
        val device = folioDevice()
        val daemon = attached(device)
        val local = dir.resolve("note.txt")
        Files.writeString(local, "written on the host ✓")
        val pushed = server.adb("-s", daemon.serial, "push", local.toString(), "/data/local/tmp/note.txt")
        assertEquals(0, pushed.exitCode, pushed.output)
        assertEquals("written on the host ✓", String(device.fileOrNull("/data/local/tmp/note.txt")!!, Charsets.UTF_8))
        val back = dir.resolve("back.txt")
        val pulled = server.adb("-s", daemon.serial, "pull", "/data/local/tmp/note.txt", back.toString())
        assertEquals(0, pulled.exitCode, pulled.output)
        assertEquals("written on the host ✓", Files.readString(back))
        val missing = server.adb("-s", daemon.serial, "pull", "/data/local/tmp/none.txt", dir.resolve("none").toString())
        assertTrue(missing.exitCode != 0 && "does not exist" in missing.output, missing.output)
    }

    @Test
    fun `adb reverse sets, lists and removes a forward, and the app's connection reaches the host port through the server`() {
        val device = folioDevice()
        val daemon = attached(device)
        ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { host ->
            val set = server.adb("-s", daemon.serial, "reverse", "localabstract:uatu-agent", "tcp:${host.localPort}")
            assertEquals(0, set.exitCode, set.output)
            assertEquals(mapOf("localabstract:uatu-agent" to host.localPort), device.reverseForwards)
            assertTrue("localabstract:uatu-agent tcp:${host.localPort}" in server.adb("-s", daemon.serial, "reverse", "--list").output)

            // The app on the device connects to its abstract socket: the device opens tcp:PORT towards the server.
            device.reverseConnector.connect(host.localPort).use { app ->
                host.accept().use { accepted ->
                    app.output.write("HELLO from the app".toByteArray())
                    app.output.flush()
                    assertEquals("HELLO from the app", String(accepted.getInputStream().readNBytes(18)))
                    accepted.getOutputStream().write("PAUSE".toByteArray())
                    assertEquals("PAUSE", String(app.input.readNBytes(5)))
                }
            }

            val removed = server.adb("-s", daemon.serial, "reverse", "--remove", "localabstract:uatu-agent")
            assertEquals(0, removed.exitCode, removed.output)
            assertTrue(device.reverseForwards.isEmpty())
            val again = server.adb("-s", daemon.serial, "reverse", "--remove", "localabstract:uatu-agent")
            assertTrue(again.exitCode != 0 && "not found" in again.output, again.output)
        }
    }

    @Test
    fun `a device that goes offline fails the next command and is listed offline`() {
        val daemon = attached()
        AdbServerDevice.connect(server.address, daemon.serial).use { adb ->
            assertEquals("1\n", adb.shell("getprop sys.boot_completed").stdout)
            daemon.goOffline()
            assertThrows(IOException::class.java) { adb.shell("getprop sys.boot_completed") }
        }
        // As for a real device on TCP: the server keeps it as offline while it tries to reconnect.
        server.awaitState(daemon.serial, state = "offline")
    }

    @Test
    fun `a device that never accepts the key is unauthorized, one that does is a device`() {
        val refusing = FakeAdbd(folioDevice(), FakeAdbd.Options(auth = FakeAdbd.Auth.REFUSE)).also { daemons += it }
        val refused = server.adb("connect", refusing.serial)
        assertTrue("failed to authenticate to ${refusing.serial}" in refused.output, refused.output)
        server.awaitState(refusing.serial, state = "unauthorized")

        // `adb connect` gives up at the prompt as with a phone; the device comes online once allowed.
        val accepting = FakeAdbd(folioDevice(), FakeAdbd.Options(auth = FakeAdbd.Auth.ACCEPT)).also { daemons += it }
        server.adb("connect", accepting.serial)
        server.awaitState(accepting.serial, state = "device")
        // The key is kept: back after going away, the device lets the server's reconnection in by its signature.
        accepting.goOffline()
        server.awaitState(accepting.serial, state = "offline")
        accepting.comeBack()
        server.awaitState(accepting.serial, state = "device", timeoutMillis = 60_000)
        assertEquals(1, accepting.keyPrompts.get(), "the device asked again for a key it had allowed")
    }
}
