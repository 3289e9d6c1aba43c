package dev.uatu.sidecar.fakedevice

import dev.uatu.sidecar.adb.ScriptedDevice
import java.io.IOException
import kotlin.system.exitProcess

/**
 * The fake device, attached to a real ADB server of its own, as a process: what
 * the host's integration tests (`cli/tests/all/`) start to run the real `uatu`
 * against a device through the real ADB server.
 *
 *     java -cp sidecar-maestro.jar dev.uatu.sidecar.fakedevice.FakeDeviceMainKt \
 *         --device builtin|DIR [--chunking whole|arbitrary:SEED] [--auth none|accept|refuse]
 *
 * It starts an ADB server on a free port (`adb` from the PATH), the device's
 * adbd on another, runs `adb connect`, and prints one line once the device is
 * `device`: `adb-server=127.0.0.1:PORT serial=127.0.0.1:PORT`. It then reads
 * standard input: `offline` makes the device go away, `event NAME` makes a
 * device event happen (see ScriptedDevice.Events); at end of file it stops the
 * server and the device and exits 0. Errors go to standard error, exit 2.
 */
fun main(args: Array<String>) {
    val options = try {
        RigOptions.parse(args.toList())
    } catch (e: IllegalArgumentException) {
        System.err.println("fake-device: ${e.message}\n${RigOptions.USAGE}")
        exitProcess(2)
    }
    val device = try {
        ScriptedDevice.load(options.device)
    } catch (e: IOException) {
        System.err.println("fake-device: ${e.message}")
        exitProcess(2)
    }
    val server = try {
        AdbServerProcess.start()
    } catch (e: IOException) {
        System.err.println("fake-device: ${e.message}")
        exitProcess(2)
    }
    val daemon = FakeAdbd(device, FakeAdbd.Options(auth = options.auth, chunking = options.chunking))
    try {
        if (options.auth == FakeAdbd.Auth.REFUSE) {
            server.adb("connect", daemon.serial)
            server.awaitState(daemon.serial, "unauthorized")
        } else {
            server.connect(daemon.serial)
        }
        println("adb-server=${server.address} serial=${daemon.serial}")
        System.out.flush()
        System.`in`.bufferedReader().forEachLine { line ->
            val command = line.trim()
            try {
                when {
                    command == "offline" -> daemon.goOffline()
                    command.startsWith("event ") -> device.happen(command.removePrefix("event ").trim())
                    command.isNotEmpty() -> System.err.println("fake-device: unknown command `$command` (offline, event NAME)")
                }
            } catch (e: IllegalArgumentException) {
                System.err.println("fake-device: ${e.message}")
            }
        }
    } catch (e: IOException) {
        System.err.println("fake-device: ${e.message}")
        daemon.close()
        server.close()
        exitProcess(2)
    }
    daemon.close()
    device.close()
    server.close()
    exitProcess(0)
}

/** The fake device process's options. */
private class RigOptions(val device: String, val chunking: Chunking, val auth: FakeAdbd.Auth) {
    companion object {
        const val USAGE = "usage: FakeDeviceMainKt --device builtin|DIR [--chunking whole|arbitrary:SEED] [--auth none|accept|refuse]"

        fun parse(args: List<String>): RigOptions {
            require(args.size % 2 == 0) { "options come in pairs: ${args.joinToString(" ")}" }
            val values = args.chunked(2).associate { (flag, value) ->
                require(flag.startsWith("--")) { "unexpected argument $flag" }
                flag.removePrefix("--") to value
            }
            val unknown = values.keys - setOf("device", "chunking", "auth")
            require(unknown.isEmpty()) { "unknown option(s) ${unknown.joinToString { "--$it" }}" }
            val device = values["device"] ?: throw IllegalArgumentException("--device is required")
            val chunking = when (val text = values["chunking"] ?: "whole") {
                "whole" -> Chunking.whole()
                else -> text.removePrefix("arbitrary:").toLongOrNull()?.takeIf { text.startsWith("arbitrary:") }?.let { Chunking.arbitrary(it) }
                    ?: throw IllegalArgumentException("--chunking $text: expected whole or arbitrary:SEED")
            }
            val auth = when (val text = values["auth"] ?: "none") {
                "none" -> FakeAdbd.Auth.NONE
                "accept" -> FakeAdbd.Auth.ACCEPT
                "refuse" -> FakeAdbd.Auth.REFUSE
                else -> throw IllegalArgumentException("--auth $text: expected none, accept or refuse")
            }
            return RigOptions(device, chunking, auth)
        }
    }
}
