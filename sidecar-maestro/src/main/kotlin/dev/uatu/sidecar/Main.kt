package dev.uatu.sidecar

import com.google.protobuf.util.JsonFormat
import dev.uatu.sidecar.adb.Adb
import dev.uatu.sidecar.adb.AdbServerAddress
import dev.uatu.sidecar.adb.AdbServerDevice
import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.android.AgentForward
import dev.uatu.sidecar.android.AndroidDriver
import dev.uatu.sidecar.android.DriverSettings
import dev.uatu.sidecar.android.DumpFormatException
import dev.uatu.sidecar.android.Rect
import dev.uatu.sidecar.android.UiAutomatorDump
import picocli.CommandLine
import picocli.CommandLine.Command
import picocli.CommandLine.Option
import picocli.CommandLine.Parameters
import uatu.driver.v1.DriverOuterClass.HierarchyResponse
import java.io.IOException
import java.nio.file.Files
import java.nio.file.NoSuchFileException
import java.nio.file.Path
import java.util.concurrent.Callable
import java.util.concurrent.CountDownLatch
import kotlin.system.exitProcess

/**
 * `java -jar sidecar-maestro.jar [options]` serves driver.proto for one Android
 * device; `... dump FILE` prints a saved UIAutomator dump as the host sees it.
 *
 * The host's contract (docs/devices.md): the first line of standard output is
 * the port, alone; logs go to standard error; the sidecar exits with 0 on
 * SIGTERM/SIGINT and when its standard input reaches end of file, which is how
 * it notices that the host is gone even when the host was killed (the host
 * keeps a pipe to its stdin open and never writes to it).
 */
@Command(
    name = "sidecar-maestro",
    mixinStandardHelpOptions = true,
    version = [DriverService.NAME + " " + DriverService.VERSION],
    description = ["uatu's Android driver: serves proto/driver.proto on 127.0.0.1 for one device, over ADB."],
    subcommands = [DumpCommand::class],
)
class ServeCommand : Callable<Int> {
    @Option(names = ["--port"], description = ["Port on 127.0.0.1; 0 (the default) picks a free one. Printed as the first line of stdout."])
    var port: Int = 0

    @Option(names = ["--device"], paramLabel = "SERIAL", description = ["The device to drive (as `adb devices` lists it); needed when several are attached."])
    var serial: String? = null

    @Option(names = ["--fake-device"], paramLabel = "DIR", description = ["Drive a scripted fake device instead: `builtin` or a directory with device.properties (for tests)."])
    var fakeDevice: String? = null

    @Option(
        names = ["--adb-server"], paramLabel = "HOST:PORT",
        description = [
            "The ADB server (default: \$ADB_SERVER_SOCKET as tcp:HOST:PORT, else \$ANDROID_ADB_SERVER_ADDRESS or localhost, " +
                "port \$ANDROID_ADB_SERVER_PORT or 5037). A server on another machine forwards the app's SDK connection " +
                "(adb reverse) to that machine's port, not this one's.",
        ],
    )
    var adbServer: String? = null

    @Option(
        names = ["--agent-port"], paramLabel = "PORT",
        description = [
            "Forward the device socket localabstract:uatu-agent to this host port (adb reverse) for the app's SDK, " +
                "removed at exit. The app is told the socket and the token of \$UATU_AGENT_TOKEN at launch.",
        ],
    )
    var agentPort: Int? = null

    @Option(names = ["--no-stdin-watch"], description = ["Keep running when stdin closes (for running it by hand in the background)."])
    var noStdinWatch: Boolean = false

    @Option(
        names = ["--no-grant-permissions"],
        description = ["Do not grant the app's requested runtime permissions at launch (by default they are, as Maestro does)."],
    )
    var noGrantPermissions: Boolean = false

    @Option(
        names = ["--keep-data"],
        description = ["Never clear the app's data (`pm clear`), even when a launch asks to: the run starts on the data the app has."],
    )
    var keepData: Boolean = false

    override fun call(): Int {
        val agent = agentPort?.let { AgentForward(it, System.getenv("UATU_AGENT_TOKEN")?.takeIf(String::isNotEmpty)) }
        val settings = DriverSettings(agent = agent, grantPermissions = !noGrantPermissions, clearData = !keepData)
        val connect: () -> Adb = if (fakeDevice != null) {
            val fake = try {
                ScriptedDevice.load(fakeDevice!!)
            } catch (e: IOException) {
                System.err.println("sidecar: ${e.message}")
                return 2
            }
            ({ fake })
        } else {
            val server = try {
                adbServer?.let(::parseAddress) ?: AdbServerAddress.default()
            } catch (e: IllegalArgumentException) {
                System.err.println("sidecar: ${e.message}")
                return 2
            }
            ({ AdbServerDevice.connect(server, serial) })
        }
        val driver = AndroidDriver(connect, settings)
        val server = try {
            SidecarServer(driver, port)
        } catch (e: IOException) {
            System.err.println("sidecar: cannot listen on 127.0.0.1:$port: ${e.message}")
            return 2
        }
        // Read once: the "connect" thread below may log after the server is closed.
        val listening = server.port
        println(listening)
        System.out.flush()

        val stop = CountDownLatch(1)
        for (name in listOf("TERM", "INT")) {
            @Suppress("DEPRECATION")
            sun.misc.Signal.handle(sun.misc.Signal(name)) { stop.countDown() }
        }
        if (!noStdinWatch) {
            Thread({
                try {
                    // Nothing is ever written: read until end of file.
                    System.`in`.transferTo(java.io.OutputStream.nullOutputStream())
                } catch (e: IOException) {
                    // A broken stdin means the same: the host is gone.
                }
                DriverService.log("standard input closed: the host is gone, stopping")
                stop.countDown()
            }, "stdin-watch").apply { isDaemon = true }.start()
        }
        // Connect now so a missing or unauthorised device is reported at once (calls report it too).
        Thread({
            try {
                driver.deviceTimeMs()
                DriverService.log("driving ${driver.serial} on 127.0.0.1:$listening")
            } catch (e: DriverException) {
                DriverService.log(e.message ?: "no device")
            }
        }, "connect").apply { isDaemon = true }.start()

        stop.await()
        server.close()
        return 0
    }

    private fun parseAddress(text: String): AdbServerAddress {
        val host = text.substringBeforeLast(':', "localhost").ifEmpty { "localhost" }
        val port = text.substringAfterLast(':').toIntOrNull()
            ?: throw CommandLine.ParameterException(CommandLine(this), "--adb-server $text: expected HOST:PORT")
        return AdbServerAddress(host, port)
    }
}

@Command(name = "dump", description = ["Print a saved `uiautomator dump` XML file as the host sees it: driver.proto's HierarchyResponse in JSON."])
class DumpCommand : Callable<Int> {
    @Parameters(paramLabel = "FILE")
    lateinit var file: Path

    override fun call(): Int {
        val text = try {
            Files.readString(file)
        } catch (e: NoSuchFileException) {
            System.err.println("sidecar dump: $file does not exist")
            return 2
        } catch (e: IOException) {
            System.err.println("sidecar dump: cannot read $file: ${e.message}")
            return 2
        }
        val hierarchy = try {
            hierarchyOfFile(text)
        } catch (e: DumpFormatException) {
            System.err.println("sidecar dump: $file: ${e.message}")
            return 2
        }
        println(JsonFormat.printer().print(hierarchy))
        return 0
    }

    companion object {
        /** A saved dump as the host would receive it; the screen is the extent of the windows. */
        fun hierarchyOfFile(text: String): HierarchyResponse {
            val xml = UiAutomatorDump.extractXml(text) ?: throw DumpFormatException("no UIAutomator XML (no <hierarchy> element)")
            val dump = UiAutomatorDump.parse(xml)
            if (dump.windows.isEmpty()) throw DumpFormatException("the dump holds no node (taken while the screen was changing?)")
            val extent = dump.windows.mapNotNull { it.bounds }
            val width = extent.maxOfOrNull { it.right } ?: 0
            val height = extent.maxOfOrNull { it.bottom } ?: 0
            return HierarchyResponse.newBuilder().setRoot(dump.rootProto(Rect(0, 0, width, height)))
                .setScreenWidth(width.coerceAtLeast(0)).setScreenHeight(height.coerceAtLeast(0)).build()
        }
    }
}

fun main(args: Array<String>) {
    exitProcess(CommandLine(ServeCommand()).execute(*args))
}
