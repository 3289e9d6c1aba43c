package dev.uatu.sidecar

import dev.uatu.sidecar.adb.Adb
import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.adb.ShellResult
import dev.uatu.sidecar.android.AndroidDriver
import dev.uatu.sidecar.android.DriverSettings
import io.grpc.ManagedChannel
import io.grpc.Server
import io.grpc.inprocess.InProcessChannelBuilder
import io.grpc.inprocess.InProcessServerBuilder
import uatu.driver.v1.AndroidDeviceGrpc
import uatu.driver.v1.DriverGrpc

fun resourceText(path: String): String =
    requireNotNull(object {}.javaClass.getResourceAsStream(path)) { "test resource $path is missing" }.use { String(it.readBytes(), Charsets.UTF_8) }

fun dump(name: String): String = resourceText("/dumps/$name")

fun builtinScreen(name: String): String = resourceText("/fake-device/$name")

/** The built-in fake device (what `--fake-device builtin` serves), for tests to script further. */
fun folioDevice(): ScriptedDevice = ScriptedDevice.load("builtin")

fun shellReply(stdout: String, exitCode: Int = 0, stderr: String = "", delayMs: Long = 0) =
    ScriptedDevice.Reply.Shell(ShellResult(stdout, stderr, exitCode), delayMs)

/**
 * Settings for tests: no pause between dump retries. The command timeout only
 * ends a test whose device hangs; a scripted device answers from memory, but a busy machine
 * may take seconds to schedule the thread that runs the command.
 */
val fastSettings = DriverSettings(dumpRetryDelayMs = 0, commandTimeoutMs = 10_000)

/** [probe]'s first non-null answer, asked again until it gives one (10 s at most): for what the device does in its own time. */
fun <T : Any> eventually(probe: () -> T?): T {
    val deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10)
    while (true) {
        probe()?.let { return it }
        if (System.nanoTime() > deadline) throw AssertionError("not so within 10 s")
        Thread.sleep(10)
    }
}

/** The real gRPC service over a real in-process channel, driving `connect`'s device. */
class InProcessSidecar(connect: () -> Adb, settings: DriverSettings = fastSettings) : AutoCloseable {
    constructor(device: ScriptedDevice, settings: DriverSettings = fastSettings) : this({ device }, settings)

    val driver = AndroidDriver(connect, settings)
    private val name = InProcessServerBuilder.generateName()
    private val server: Server = InProcessServerBuilder.forName(name).directExecutor()
        .addService(DriverService(driver)).addService(AndroidDeviceService(driver)).build().start()
    private val channel: ManagedChannel = InProcessChannelBuilder.forName(name).directExecutor().build()
    val stub: DriverGrpc.DriverBlockingStub = DriverGrpc.newBlockingStub(channel)
    val android: AndroidDeviceGrpc.AndroidDeviceBlockingStub = AndroidDeviceGrpc.newBlockingStub(channel)

    override fun close() {
        channel.shutdownNow()
        server.shutdownNow()
        driver.close()
    }
}
