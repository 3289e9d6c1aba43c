package dev.uatu.sidecar

import com.google.protobuf.util.JsonFormat
import io.grpc.ManagedChannel
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import uatu.driver.v1.DriverGrpc
import uatu.driver.v1.DriverOuterClass.HealthRequest
import uatu.driver.v1.DriverOuterClass.HierarchyRequest
import uatu.driver.v1.DriverOuterClass.HierarchyResponse
import uatu.driver.v1.DriverOuterClass.LaunchRequest
import uatu.driver.v1.DriverOuterClass.Node
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/** The packaged JAR as a real process, the way the host runs it (run by failsafe after `package`). */
class SidecarProcessIT {
    private val jar: Path = Path.of(requireNotNull(System.getProperty("sidecar.jar")) { "failsafe sets sidecar.jar" })
    private val java: String = ProcessHandle.current().info().command().orElse("java")
    private val started = mutableListOf<Process>()
    private val channels = mutableListOf<ManagedChannel>()

    @AfterEach
    fun stopEverything() {
        channels.forEach { it.shutdownNow() }
        started.forEach { it.destroyForcibly() }
    }

    private fun start(vararg args: String): Process =
        ProcessBuilder(listOf(java, "-jar", jar.toString()) + args).redirectError(ProcessBuilder.Redirect.INHERIT).start()
            .also { started += it }

    /** The port from the first line of stdout, as the host reads it. */
    private fun portOf(process: Process): Int {
        val line = process.inputStream.bufferedReader().readLine()
        return requireNotNull(line?.toIntOrNull()) { "the first line of stdout is not a port: $line" }
    }

    private fun stubFor(port: Int): DriverGrpc.DriverBlockingStub {
        val channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build().also { channels += it }
        return DriverGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS)
    }

    private fun texts(node: Node): List<String> = listOfNotNull(node.text.ifEmpty { null }) + node.childrenList.flatMap(::texts)

    @Test
    fun `the JAR prints its port first, serves the fake device, and exits with 0 on SIGTERM`() {
        val process = start("--port", "0", "--fake-device", "builtin")
        val stub = stubFor(portOf(process))
        val health = stub.health(HealthRequest.getDefaultInstance())
        assertTrue(health.ready)
        assertEquals("android", health.platform)
        stub.launch(LaunchRequest.newBuilder().setBundleId("app.folio").build())
        assertTrue("Add account" in texts(stub.hierarchy(HierarchyRequest.getDefaultInstance()).root))

        process.destroy() // SIGTERM
        assertTrue(process.waitFor(15, TimeUnit.SECONDS), "the sidecar did not stop on SIGTERM")
        assertEquals(0, process.exitValue())
    }

    @Test
    fun `the JAR exits with 0 when its standard input closes (the host is gone)`() {
        val process = start("--fake-device", "builtin")
        portOf(process)
        process.outputStream.close()
        assertTrue(process.waitFor(15, TimeUnit.SECONDS), "the sidecar did not stop when stdin closed")
        assertEquals(0, process.exitValue())
    }

    @Test
    fun `a fake device directory is served as written`(@TempDir dir: Path) {
        Files.writeString(
            dir.resolve("device.properties"),
            "serial=fake-7\npackages=uk.co.openweather\nscreen=1080x2424\nscreens=home.xml\nscreencap=shot.png\n",
        )
        Files.writeString(dir.resolve("home.xml"), dump("openweather-home.xml"))
        Files.write(dir.resolve("shot.png"), folioDevice().screencap)
        val process = start("--fake-device", dir.toString())
        val stub = stubFor(portOf(process))
        assertTrue(stub.health(HealthRequest.getDefaultInstance()).version.contains("fake-7"))
        stub.launch(LaunchRequest.newBuilder().setBundleId("uk.co.openweather").build())
        assertTrue("Humidity: 72%" in texts(stub.hierarchy(HierarchyRequest.getDefaultInstance()).root))
    }

    @Test
    fun `a missing fake device directory fails at start with exit code 2`(@TempDir dir: Path) {
        val process = ProcessBuilder(java, "-jar", jar.toString(), "--fake-device", dir.resolve("nope").toString())
            .redirectErrorStream(true).start().also { started += it }
        val output = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(15, TimeUnit.SECONDS))
        assertEquals(2, process.exitValue())
        assertTrue(output.contains("not a directory"), output)
    }

    @Test
    fun `dump prints a saved screen as the host's JSON`(@TempDir dir: Path) {
        val file = dir.resolve("screen.xml")
        Files.writeString(file, dump("openweather-home.xml"))
        val process = ProcessBuilder(java, "-jar", jar.toString(), "dump", file.toString()).start().also { started += it }
        val json = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(15, TimeUnit.SECONDS))
        assertEquals(0, process.exitValue())
        val hierarchy = HierarchyResponse.newBuilder().also { JsonFormat.parser().merge(json, it) }.build()
        fun count(node: Node): Int = 1 + node.childrenList.sumOf(::count)
        assertEquals(110, count(hierarchy.root))
        assertEquals(1080, hierarchy.screenWidth)
        assertEquals(2424, hierarchy.screenHeight)
        assertTrue(json.contains("\"text\": \"Humidity: 72%\""))
    }
}
