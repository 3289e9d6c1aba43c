package dev.uatu.sidecar.fakedevice

import dev.uatu.sidecar.adb.ScriptedDevice
import java.io.ByteArrayOutputStream
import java.io.DataInputStream
import java.io.EOFException
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.nio.ByteBuffer
import java.nio.ByteOrder

/** What a device service sees of its stream: what the ADB server sends, and where its answer goes. */
interface ServiceStream {
    val input: InputStream
    val output: OutputStream
}

/** One device service (`shell:`, `exec:`, `sync:`, `reverse:`), run on its stream until it is done. */
fun interface DeviceService {
    fun serve(stream: ServiceStream)
}

/**
 * The services adbd offers, done on a [ScriptedDevice]: the bytes on the stream
 * are those of adbd (AOSP `packages/modules/adb`: `shell_protocol.h`,
 * `file_sync_protocol.h`, the `reverse:` requests of `adb.cpp`).
 */
object DeviceServices {
    /** The service for an OPEN's destination, or null when adbd would refuse it (the stream is then closed at once). */
    fun service(destination: String, device: ScriptedDevice, chunking: Chunking): DeviceService? = when {
        destination.startsWith("shell") && (destination.getOrNull(5) == ':' || destination.getOrNull(5) == ',') ->
            shell(destination, device, chunking)
        destination.startsWith("exec:") -> DeviceService { stream ->
            stream.output.write(device.execOut(destination.removePrefix("exec:")))
        }
        destination == "sync:" -> DeviceService { stream -> Sync(device, stream).serve() }
        destination.startsWith("reverse:") -> DeviceService { stream -> reverse(destination.removePrefix("reverse:"), device, stream.output) }
        else -> null
    }

    // --- shell ---------------------------------------------------------------

    /** `shell[,OPTION...]:COMMAND`; with the option `v2`, the shell protocol's packets, else raw output. */
    private fun shell(destination: String, device: ScriptedDevice, chunking: Chunking): DeviceService {
        val options = destination.substringBefore(':').split(',').drop(1)
        val command = destination.substringAfter(':')
        val v2 = "v2" in options
        return DeviceService { stream ->
            if (device.isStreaming(command)) {
                // `logcat` without -d: what comes, as it comes, until the ADB server closes the stream.
                device.shellStream(command).use { output ->
                    while (true) {
                        val piece = output.next() ?: break
                        stream.output.write(if (v2) shellPacket(SHELL_STDOUT, piece) else piece)
                    }
                }
                if (v2) stream.output.write(shellPacket(SHELL_EXIT, byteArrayOf(0)))
                return@DeviceService
            }
            val result = device.shell(command)
            val stdout = result.stdout.toByteArray(Charsets.UTF_8)
            val stderr = result.stderr.toByteArray(Charsets.UTF_8)
            if (!v2) {
                // The raw shell has one stream for both and no exit code.
                stream.output.write(stdout + stderr)
                return@DeviceService
            }
            val packets = ByteArrayOutputStream()
            for (piece in chunking.split(stdout, SHELL_PACKET_MAX)) if (piece.isNotEmpty()) packets.write(shellPacket(SHELL_STDOUT, piece))
            for (piece in chunking.split(stderr, SHELL_PACKET_MAX)) if (piece.isNotEmpty()) packets.write(shellPacket(SHELL_STDERR, piece))
            packets.write(shellPacket(SHELL_EXIT, byteArrayOf(result.exitCode.coerceIn(0, 255).toByte())))
            stream.output.write(packets.toByteArray())
        }
    }

    /** One packet of the shell protocol: id, 32-bit little-endian length, payload. */
    fun shellPacket(id: Int, payload: ByteArray): ByteArray =
        ByteBuffer.allocate(5 + payload.size).order(ByteOrder.LITTLE_ENDIAN).put(id.toByte()).putInt(payload.size).put(payload).array()

    const val SHELL_STDOUT = 1
    const val SHELL_STDERR = 2
    const val SHELL_EXIT = 3
    private const val SHELL_PACKET_MAX = 32 * 1024

    // --- reverse -------------------------------------------------------------

    /** `forward:[norebind:]LOCAL;REMOTE`, `killforward:LOCAL`, `killforward-all`, `list-forward`: OKAY, or FAIL and why. */
    private fun reverse(request: String, device: ScriptedDevice, output: OutputStream) {
        val answer = try {
            when {
                request.startsWith("forward:") -> {
                    val spec = request.removePrefix("forward:")
                    val norebind = spec.startsWith("norebind:")
                    val (local, remote) = spec.removePrefix("norebind:").split(';', limit = 2).let { it[0] to it.getOrElse(1) { "" } }
                    val port = remote.removePrefix("tcp:").toIntOrNull()
                    if (!remote.startsWith("tcp:") || port == null) throw IOException("cannot bind listener: unsupported destination '$remote'")
                    if (norebind && local in device.reverseForwards) throw IOException("cannot rebind existing socket")
                    device.reverseForward(local, port)
                    OKAY
                }
                request.startsWith("killforward:") -> {
                    val local = request.removePrefix("killforward:")
                    if (local !in device.reverseForwards) throw IOException("listener '$local' not found")
                    device.removeReverseForward(local)
                    OKAY
                }
                request == "killforward-all" -> {
                    device.reverseForwards.keys.forEach(device::removeReverseForward)
                    OKAY
                }
                // The list alone: adbd sends no OKAY before it (the ADB server does, for its own list).
                request == "list-forward" -> protocolString(
                    device.reverseForwards.entries.joinToString("") { (local, port) -> "host $local tcp:$port\n" },
                )
                else -> throw IOException("unknown reverse request '$request'")
            }
        } catch (e: IOException) {
            "FAIL".toByteArray() + protocolString(e.message ?: "failed")
        }
        output.write(answer)
    }

    private val OKAY = "OKAY".toByteArray()

    /** ADB's length-prefixed string: four hex digits, then the bytes. */
    private fun protocolString(text: String): ByteArray {
        val bytes = text.toByteArray(Charsets.UTF_8)
        return "%04x".format(bytes.size).toByteArray() + bytes
    }

    // --- sync ----------------------------------------------------------------

    /** The file sync protocol: requests of a 4-byte id, a 32-bit little-endian length and as many bytes. */
    private class Sync(private val device: ScriptedDevice, stream: ServiceStream) {
        private val input = DataInputStream(stream.input)
        private val output = stream.output

        fun serve() {
            while (true) {
                val (id, length) = try {
                    header()
                } catch (e: EOFException) {
                    return
                }
                val argument = String(input.readNBytes(length), Charsets.UTF_8)
                when (id) {
                    "STAT" -> stat(argument)
                    "LIST" -> reply("DONE", 0, 0, 0, 0)
                    "SEND" -> send(argument)
                    "RECV" -> receive(argument)
                    "QUIT" -> return
                    else -> {
                        fail("unknown sync request $id")
                        return
                    }
                }
            }
        }

        private fun header(): Pair<String, Int> {
            val header = ByteArray(8)
            input.readFully(header)
            val length = ByteBuffer.wrap(header, 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt()
            return String(header, 0, 4, Charsets.US_ASCII) to length
        }

        private fun stat(path: String) {
            val content = device.fileOrNull(path)
            // mode, size, mtime; all zero for a file that does not exist.
            if (content == null) reply("STAT", 0, 0, 0) else reply("STAT", FILE_MODE, content.size, 0)
        }

        private fun send(pathAndMode: String) {
            val path = pathAndMode.substringBeforeLast(',')
            val content = ByteArrayOutputStream()
            while (true) {
                val (id, length) = header()
                when (id) {
                    "DATA" -> content.write(input.readNBytes(length))
                    "DONE" -> break // length is the mtime
                    else -> {
                        fail("unexpected $id in SEND")
                        return
                    }
                }
            }
            device.push(content.toByteArray(), path)
            reply("OKAY", 0)
        }

        private fun receive(path: String) {
            val content = device.fileOrNull(path) ?: return fail("remote object '$path' does not exist")
            var start = 0
            while (start < content.size) {
                val size = minOf(SYNC_DATA_MAX, content.size - start)
                output.write(word("DATA", size) + content.copyOfRange(start, start + size))
                start += size
            }
            reply("DONE", 0)
        }

        private fun fail(message: String) {
            val bytes = message.toByteArray(Charsets.UTF_8)
            output.write(word("FAIL", bytes.size) + bytes)
        }

        private fun reply(id: String, vararg words: Int) {
            val buffer = ByteBuffer.allocate(4 + 4 * words.size).order(ByteOrder.LITTLE_ENDIAN).put(id.toByteArray(Charsets.US_ASCII))
            words.forEach { buffer.putInt(it) }
            output.write(buffer.array())
        }

        private fun word(id: String, value: Int): ByteArray =
            ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).put(id.toByteArray(Charsets.US_ASCII)).putInt(value).array()

        companion object {
            private const val FILE_MODE = 0x81a4 // a regular file, 0644
            private const val SYNC_DATA_MAX = 64 * 1024
        }
    }
}
