package dev.uatu.sidecar.adb

import dadb.AdbShellPacket
import dadb.AdbStream
import dadb.Dadb
import dev.uatu.sidecar.DriverException
import okio.Buffer
import okio.BufferedSink
import okio.BufferedSource
import okio.buffer
import okio.sink
import okio.source
import java.io.ByteArrayOutputStream
import java.io.DataInputStream
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.net.InetSocketAddress
import java.net.Socket
import java.nio.channels.Channels
import java.nio.channels.SocketChannel

/**
 * A device reached through the ADB server (`adb start-server`, port 5037 by
 * default). Going through the server rather than straight to adbd is what makes
 * `adb reverse` work: the server accepts the connections the device opens back
 * to the host and hands them to the host's TCP port.
 *
 * Each command is one connection to the server (`host:transport:SERIAL`, then
 * the device service), on an interruptible channel: interrupting the thread
 * that waits for a device closes that connection, and the server then closes the
 * device's stream, which ends the command on the device. dadb reads the shell
 * protocol's packets and speaks the sync protocol over these connections. Its
 * own server client is not used: it starts an ADB server by itself when none
 * answers (a process this program would leave behind), and its blocking sockets
 * cannot be interrupted.
 */
class AdbServerDevice private constructor(
    override val serial: String,
    private val server: AdbServerAddress,
) : Adb {
    private val dadb = object : Dadb {
        override fun open(destination: String): AdbStream = openService(destination)

        override fun supportsFeature(feature: String) = false

        override fun close() {}

        override fun toString() = serial
    }

    /**
     * Runs [command] through the shell protocol (exit code, stdout and stderr apart);
     * the output is decoded as UTF-8 once it is whole, so a character cut between two
     * packets arrives intact.
     */
    override fun shell(command: String): ShellResult {
        val shell = dadb.openShell(command)
        try {
            val stdout = ByteArrayOutputStream()
            val stderr = ByteArrayOutputStream()
            while (true) {
                when (val packet = shell.read()) {
                    is AdbShellPacket.StdOut -> stdout.write(packet.payload)
                    is AdbShellPacket.StdError -> stderr.write(packet.payload)
                    is AdbShellPacket.Exit -> return ShellResult(
                        stdout.toString(Charsets.UTF_8),
                        stderr.toString(Charsets.UTF_8),
                        packet.payload[0].toInt() and 0xFF,
                    )
                }
            }
        } finally {
            shell.close()
        }
    }

    override fun shellStream(command: String): ShellStream {
        val shell = dadb.openShell(command)
        return object : ShellStream {
            override fun next(): ByteArray? {
                while (true) {
                    val packet = try {
                        shell.read()
                    } catch (e: IOException) {
                        return null // closed, here or on the device
                    }
                    when (packet) {
                        is AdbShellPacket.StdOut -> return packet.payload
                        is AdbShellPacket.StdError -> continue
                        is AdbShellPacket.Exit -> return null
                    }
                }
            }

            override fun close() = shell.close()
        }
    }

    override fun execOut(command: String): ByteArray =
        openService("exec:$command").use { stream -> stream.source.readByteArray() }

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
        openService(request).use { stream ->
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

    /** One connection to the server switched to this device and opened on [service]. */
    private fun openService(service: String): AdbStream {
        val channel = try {
            SocketChannel.open(InetSocketAddress(server.host, server.port))
        } catch (e: IOException) {
            throw IOException("cannot reach the ADB server at $server: ${e.message}", e)
        }
        try {
            val input = Channels.newInputStream(channel)
            val output = Channels.newOutputStream(channel)
            hostRequest(input, output, "host:transport:$serial")
            hostRequest(input, output, service)
            return ChannelStream(channel, input, output)
        } catch (e: Exception) {
            channel.close()
            throw e
        }
    }

    /** A device stream over the server connection; closing it closes the connection. */
    private class ChannelStream(private val channel: SocketChannel, input: InputStream, output: OutputStream) : AdbStream {
        override val source: BufferedSource = input.source().buffer()
        override val sink: BufferedSink = output.sink().buffer()

        override fun close() = channel.close()
    }

    override fun close() {}

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
            return AdbServerDevice(chosen.serial, server)
        }

        /** The devices the ADB server knows, with their states (`adb devices`). */
        fun listDevices(server: AdbServerAddress): List<AttachedDevice> {
            val answer = try {
                Socket().use { socket ->
                    socket.connect(InetSocketAddress(server.host, server.port), 2_000)
                    socket.soTimeout = 5_000
                    hostRequest(socket.getInputStream(), socket.getOutputStream(), "host:devices")
                    readProtocolString(DataInputStream(socket.getInputStream()))
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

        /**
         * One request of the ADB server's smart-socket protocol: four hex digits of
         * length and the text; answered `OKAY`, or `FAIL` and a length-prefixed reason
         * (`device 'X' not found`, `device offline`), thrown as an [IOException].
         */
        private fun hostRequest(input: InputStream, output: OutputStream, request: String) {
            val bytes = request.toByteArray(Charsets.UTF_8)
            output.write("%04x".format(bytes.size).toByteArray(Charsets.US_ASCII) + bytes)
            output.flush()
            val data = DataInputStream(input)
            val status = String(data.readNBytes(4), Charsets.US_ASCII)
            if (status == "OKAY") return
            val reason = if (status == "FAIL") readProtocolString(data) else "unexpected answer `$status`"
            throw IOException("ADB server refused $request: $reason")
        }

        private fun readProtocolString(input: DataInputStream): String {
            val length = String(input.readNBytes(4), Charsets.US_ASCII).toIntOrNull(16) ?: throw IOException("ADB server answered no length")
            return String(input.readNBytes(length), Charsets.UTF_8)
        }
    }
}

data class AttachedDevice(val serial: String, val state: String)

data class AdbServerAddress(val host: String, val port: Int) {
    override fun toString() = "$host:$port"

    companion object {
        /**
         * The server adb itself would use: `ADB_SERVER_SOCKET=tcp:HOST:PORT` when set, else
         * `ANDROID_ADB_SERVER_ADDRESS` (default localhost) and `ANDROID_ADB_SERVER_PORT` (default 5037).
         */
        fun default(environment: Map<String, String> = System.getenv()): AdbServerAddress {
            environment["ADB_SERVER_SOCKET"]?.takeIf { it.isNotBlank() }?.let { socket ->
                return parseSocket(socket) ?: throw IllegalArgumentException(
                    "ADB_SERVER_SOCKET=$socket: expected tcp:HOST:PORT (the only form uatu reads)",
                )
            }
            val host = environment["ANDROID_ADB_SERVER_ADDRESS"]?.takeIf { it.isNotBlank() } ?: "localhost"
            return AdbServerAddress(host, environment["ANDROID_ADB_SERVER_PORT"]?.toIntOrNull() ?: 5037)
        }

        /** `tcp:HOST:PORT` (adb's socket spec), or null when it is not one. */
        fun parseSocket(spec: String): AdbServerAddress? {
            val address = spec.removePrefix("tcp:").takeIf { spec.startsWith("tcp:") } ?: return null
            val host = address.substringBeforeLast(':', "").removeSurrounding("[", "]").ifEmpty { return null }
            val port = address.substringAfterLast(':').toIntOrNull()?.takeIf { it in 1..65535 } ?: return null
            return AdbServerAddress(host, port)
        }
    }
}
