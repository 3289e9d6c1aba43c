package dev.uatu.sidecar.fakedevice

import dev.uatu.sidecar.adb.AdbServerAddress
import dev.uatu.sidecar.adb.AdbServerDevice
import java.io.IOException
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/**
 * A real ADB server (the `adb` binary's `server nodaemon`) of its own: on a free
 * loopback port, never the default 5037 that people and other programs share,
 * with its keys and log in a temporary home. What the tests attach the fake
 * device to.
 *
 * It runs under a watchdog shell that reads its standard input and kills the
 * server when that pipe closes: at [close], and also when this JVM ends in any
 * way (the kernel closes the pipe), so no test leaves an ADB server behind.
 */
class AdbServerProcess private constructor(
    private val watchdog: Process,
    val port: Int,
    /** The temporary home: `.android/adbkey` and the server's log `adb-server.log`. */
    val home: Path,
    private val adbBinary: String,
) : AutoCloseable {
    val address = AdbServerAddress("127.0.0.1", port)

    /** The result of one `adb` client command. */
    data class Result(val exitCode: Int, val output: String)

    /** Runs `adb -P PORT ARGS...` against this server and waits for it. */
    fun adb(vararg args: String, timeoutSeconds: Long = 60): Result {
        val process = ProcessBuilder(listOf(adbBinary, "-P", port.toString()) + args)
            .redirectErrorStream(true)
            .also { environment(it) }
            .start()
        process.outputStream.close()
        val output = process.inputStream.bufferedReader().readText()
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly()
            throw IOException("`adb ${args.joinToString(" ")}` did not end within $timeoutSeconds s")
        }
        return Result(process.exitValue(), output)
    }

    /**
     * `adb connect HOST:PORT`, then waits until the server lists the device in
     * [state] (`device` once its handshake is done; `unauthorized` for a device
     * that refuses the key), at most [timeoutMillis].
     */
    fun connect(serial: String, state: String = "device", timeoutMillis: Long = 30_000) {
        val connected = adb("connect", serial)
        if (connected.exitCode != 0 || connected.output.contains("failed") || connected.output.contains("cannot")) {
            throw IOException("`adb connect $serial` failed: ${connected.output.trim()}")
        }
        awaitState(serial, state, timeoutMillis)
    }

    /** Waits until `adb devices` lists [serial] in [state] (null: not listed at all). */
    fun awaitState(serial: String, state: String?, timeoutMillis: Long = 30_000) {
        val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
        var seen: String? = null
        while (System.nanoTime() < deadline) {
            seen = AdbServerDevice.listDevices(address).firstOrNull { it.serial == serial }?.state
            if (seen == state) return
            Thread.sleep(POLL_MILLIS)
        }
        throw IOException("the ADB server at $address lists $serial as ${seen ?: "absent"}, not ${state ?: "absent"}, after $timeoutMillis ms")
    }

    private fun environment(builder: ProcessBuilder) = environmentFor(builder, home)

    /** Stops the server (`kill-server`, then the watchdog kills what is left) and removes its home. */
    override fun close() {
        try {
            adb("kill-server", timeoutSeconds = 10)
        } catch (e: IOException) {
            // The watchdog stops it anyway.
        }
        watchdog.outputStream.close()
        if (!watchdog.waitFor(10, TimeUnit.SECONDS)) watchdog.destroyForcibly()
        home.toFile().deleteRecursively()
    }

    companion object {
        private const val POLL_MILLIS = 20L

        /**
         * Starts a server with `adb` from the PATH (Debian's package `adb`; dev/setup installs it)
         * and waits until it accepts connections.
         */
        fun start(adbBinary: String = "adb", timeoutMillis: Long = 30_000): AdbServerProcess {
            val home = Files.createTempDirectory("uatu-adb-server")
            var lastError: IOException? = null
            repeat(3) {
                // A port free now may be taken before the server binds it: then try another.
                val port = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
                val watchdog = ProcessBuilder(
                    "sh", "-c",
                    // The server in the background (its stdin is /dev/null); the shell waits for its own stdin to close.
                    "\"$0\" -P \"$1\" server nodaemon >>\"$2\" 2>&1 & server=$!; read _; kill \$server 2>/dev/null; wait \$server",
                    adbBinary, port.toString(), home.resolve("adb-server.log").toString(),
                ).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).also { environmentFor(it, home) }
                    .start()
                val server = AdbServerProcess(watchdog, port, home, adbBinary)
                try {
                    awaitListening(port, watchdog, timeoutMillis)
                    return server
                } catch (e: IOException) {
                    lastError = e
                    watchdog.outputStream.close()
                    watchdog.waitFor(10, TimeUnit.SECONDS)
                }
            }
            val log = runCatching { Files.readString(home.resolve("adb-server.log")) }.getOrDefault("")
            home.toFile().deleteRecursively()
            throw IOException("could not start an ADB server with `$adbBinary`: ${lastError?.message}\n$log".trim(), lastError)
        }

        private fun awaitListening(port: Int, watchdog: Process, timeoutMillis: Long) {
            val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
            while (System.nanoTime() < deadline) {
                if (!watchdog.isAlive) throw IOException("the ADB server on port $port exited at start")
                try {
                    Socket().use { it.connect(InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1_000) }
                    return
                } catch (e: IOException) {
                    Thread.sleep(POLL_MILLIS)
                }
            }
            throw IOException("the ADB server on port $port did not listen within $timeoutMillis ms")
        }

        /** The server's and its clients' environment: the private home, and no inherited server port. */
        private fun environmentFor(builder: ProcessBuilder, home: Path) {
            builder.environment().apply {
                put("HOME", home.toString())
                remove("ANDROID_ADB_SERVER_PORT")
                remove("ANDROID_ADB_SERVER_ADDRESS")
                remove("ADB_SERVER_SOCKET")
                remove("ANDROID_SDK_HOME")
                remove("ANDROID_USER_HOME")
                remove("ADB_VENDOR_KEYS")
            }
        }
    }
}
