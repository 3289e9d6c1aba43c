package dev.uatu.sidecar.adb

import dadb.Dadb
import dadb.adbserver.AdbServer
import dev.uatu.sidecar.DriverException
import okio.Buffer
import java.io.DataInputStream
import java.io.IOException
import java.net.InetSocketAddress
import java.net.Socket

/**
 * A device reached through the ADB server (`adb start-server`, port 5037 by
 * default) with dadb. Going through the server rather than straight to adbd is
 * what makes `adb reverse` work: the server accepts the connections the device
 * opens back to the host and hands them to the host's TCP port.
 */
class AdbServerDevice private constructor(
    override val serial: String,
    private val dadb: Dadb,
) : Adb {
    override fun shell(command: String): ShellResult {
        val response = dadb.shell(command)
        return ShellResult(response.output, response.errorOutput, response.exitCode)
    }

    override fun execOut(command: String): ByteArray =
        dadb.open("exec:$command").use { stream -> stream.source.readByteArray() }

    override fun push(content: ByteArray, remotePath: String) {
        dadb.push(Buffer().write(content), remotePath, FILE_MODE, System.currentTimeMillis())
    }

    override fun pull(remotePath: String): ByteArray {
        val sink = Buffer()
        dadb.pull(sink, remotePath)
        return sink.readByteArray()
    }

    override fun reverseForward(deviceSocket: String, hostPort: Int) {
        requestOnDevice("reverse:forward:$deviceSocket;tcp:$hostPort")
    }

    override fun removeReverseForward(deviceSocket: String) {
        try {
            requestOnDevice("reverse:killforward:$deviceSocket")
        } catch (e: IOException) {
            // Nothing to remove (or the device is gone, which removes it too).
        }
    }

    /** Sends one adbd service request that answers `OKAY` or `FAIL` + a length-prefixed message. */
    private fun requestOnDevice(request: String) {
        dadb.open(request).use { stream ->
            val status = stream.source.readUtf8(4)
            if (status != "OKAY") {
                val message = runCatching {
                    val length = stream.source.readUtf8(4).toInt(16)
                    stream.source.readUtf8(length.toLong())
                }.getOrDefault(status)
                throw IOException("$request failed on $serial: $message")
            }
        }
    }

    override fun close() = dadb.close()

    override fun toString() = "Android device $serial"

    companion object {
        private const val FILE_MODE = 420 // 0644

        /**
         * Connects to the device `serial`, or to the only device attached when
         * `serial` is null. Fails with an actionable [DriverException] when
         * there is no device, several and none chosen, or the chosen one is
         * missing, unauthorised or offline.
         */
        fun connect(server: AdbServerAddress, serial: String?): AdbServerDevice {
            val devices = listDevices(server)
            val chosen = chooseDevice(devices, serial, server)
            val dadb = AdbServer.createDadb(server.host, server.port, "host:transport:${chosen.serial}")
            return AdbServerDevice(chosen.serial, dadb)
        }

        /** The devices the ADB server knows, with their states (`adb devices`). */
        fun listDevices(server: AdbServerAddress): List<AttachedDevice> {
            val answer = try {
                Socket().use { socket ->
                    socket.connect(InetSocketAddress(server.host, server.port), 2_000)
                    socket.soTimeout = 5_000
                    hostRequest(socket, "host:devices")
                }
            } catch (e: IOException) {
                throw DriverException.adbServerUnreachable(server, e)
            }
            return parseDeviceList(answer)
        }

        /** `adb devices` lines: `SERIAL<TAB>STATE`. */
        fun parseDeviceList(text: String): List<AttachedDevice> =
            text.lines().mapNotNull { line ->
                val parts = line.trim().split('\t')
                if (parts.size == 2 && parts[0].isNotEmpty()) AttachedDevice(parts[0], parts[1]) else null
            }

        fun chooseDevice(devices: List<AttachedDevice>, serial: String?, server: AdbServerAddress): AttachedDevice {
            val chosen = if (serial == null) {
                when (devices.size) {
                    0 -> throw DriverException.noDevice(server)
                    1 -> devices.single()
                    else -> throw DriverException.severalDevices(devices.map { it.serial })
                }
            } else {
                devices.firstOrNull { it.serial == serial }
                    ?: throw DriverException.deviceNotAttached(serial, devices.map { it.serial })
            }
            when (chosen.state) {
                "device" -> return chosen
                "unauthorized" -> throw DriverException.unauthorised(chosen.serial)
                else -> throw DriverException.deviceNotReady(chosen.serial, chosen.state)
            }
        }

        /** One request of the ADB server's smart-socket protocol: hex length + text, answered OKAY/FAIL + hex length + text. */
        private fun hostRequest(socket: Socket, request: String): String {
            val bytes = request.toByteArray(Charsets.UTF_8)
            socket.getOutputStream().apply {
                write(String.format("%04x", bytes.size).toByteArray(Charsets.US_ASCII))
                write(bytes)
                flush()
            }
            val input = DataInputStream(socket.getInputStream())
            val status = String(input.readNBytes(4), Charsets.US_ASCII)
            val length = String(input.readNBytes(4), Charsets.US_ASCII).toInt(16)
            val payload = String(input.readNBytes(length), Charsets.UTF_8)
            if (status != "OKAY") throw IOException("ADB server refused $request: $payload")
            return payload
        }
    }
}

data class AttachedDevice(val serial: String, val state: String)

data class AdbServerAddress(val host: String, val port: Int) {
    override fun toString() = "$host:$port"

    companion object {
        /** The server adb itself would use: `ANDROID_ADB_SERVER_PORT`, else 5037, on localhost. */
        fun default(): AdbServerAddress =
            AdbServerAddress("localhost", System.getenv("ANDROID_ADB_SERVER_PORT")?.toIntOrNull() ?: 5037)
    }
}
