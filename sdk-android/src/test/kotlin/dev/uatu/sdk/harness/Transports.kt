package dev.uatu.sdk.harness

import dev.uatu.sdk.core.Connection
import dev.uatu.sdk.core.Transport
import java.io.InputStream
import java.io.OutputStream
import java.net.StandardProtocolFamily
import java.net.UnixDomainSocketAddress
import java.nio.ByteBuffer
import java.nio.channels.SocketChannel
import java.nio.file.Path

/** The host's Unix socket, through JDK 16's Unix domain socket channels. */
class UnixSocketTransport(private val path: Path) : Transport {
    override fun connect(): Connection {
        val channel = SocketChannel.open(StandardProtocolFamily.UNIX)
        try {
            channel.connect(UnixDomainSocketAddress.of(path))
        } catch (e: Exception) {
            channel.close()
            throw e
        }
        return ChannelConnection(channel)
    }
}

/**
 * Streams over a blocking socket channel that may be read and written from two
 * threads at once. (`Channels.newInputStream` and `newOutputStream` share one
 * lock, so a thread blocked reading would block every writer.)
 */
class ChannelConnection(private val channel: SocketChannel) : Connection {
    override val input: InputStream = object : InputStream() {
        override fun read(): Int {
            val one = ByteArray(1)
            return if (read(one, 0, 1) < 0) -1 else one[0].toInt() and 0xFF
        }

        override fun read(b: ByteArray, off: Int, len: Int): Int =
            if (len == 0) 0 else channel.read(ByteBuffer.wrap(b, off, len))
    }

    override val output: OutputStream = object : OutputStream() {
        override fun write(b: Int) = write(byteArrayOf(b.toByte()), 0, 1)

        override fun write(b: ByteArray, off: Int, len: Int) {
            val buffer = ByteBuffer.wrap(b, off, len)
            while (buffer.hasRemaining()) channel.write(buffer)
        }
    }

    override fun close() = channel.close()
}
