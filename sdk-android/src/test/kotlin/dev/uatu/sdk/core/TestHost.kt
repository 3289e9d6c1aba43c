package dev.uatu.sdk.core

import java.net.StandardProtocolFamily
import java.net.UnixDomainSocketAddress
import dev.uatu.sdk.harness.ChannelConnection
import java.nio.channels.ServerSocketChannel
import java.nio.channels.SocketChannel
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail

/**
 * A minimal host for the core's tests: a real Unix socket that accepts the SDK,
 * reads its frames with the codec under test and sends what the test says.
 * (The real Rust host is exercised by the host's cross-language test.)
 */
class TestHost(val path: Path) : AutoCloseable {
    private val server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).apply { bind(UnixDomainSocketAddress.of(path)) }
    private val accepted = LinkedBlockingQueue<HostSide>()
    private val all = java.util.concurrent.CopyOnWriteArrayList<HostSide>()
    private val acceptor = Thread {
        try {
            while (true) accepted.put(HostSide(server.accept()).also { all += it })
        } catch (e: Exception) {
            // closed
        }
    }.apply {
        isDaemon = true
        start()
    }

    fun accept(timeoutMillis: Long = 5_000): HostSide =
        accepted.poll(timeoutMillis, TimeUnit.MILLISECONDS) ?: fail("the SDK did not connect within $timeoutMillis ms")

    fun acceptNone(withinMillis: Long) {
        val side = accepted.poll(withinMillis, TimeUnit.MILLISECONDS)
        assertTrue(side == null, "the SDK connected again, but should not have")
    }

    override fun close() {
        server.close()
        Files.deleteIfExists(path)
        all.forEach { it.close() } // as when the host process dies
    }

    /** One accepted connection. */
    class HostSide(private val channel: SocketChannel) : AutoCloseable {
        private val streams = ChannelConnection(channel)
        private val output = streams.output
        private val received = LinkedBlockingQueue<Result<Message>>()
        private val reader = Thread {
            val input = streams.input
            while (true) {
                val result = runCatching { Frames.read(input) }
                received.put(result)
                if (result.isFailure) return@Thread
            }
        }.apply {
            isDaemon = true
            start()
        }

        fun send(message: Message) = Frames.write(output, message)

        fun sendBytes(bytes: ByteArray) {
            output.write(bytes)
            output.flush()
        }

        fun receive(timeoutMillis: Long = 5_000): Message {
            val result = received.poll(timeoutMillis, TimeUnit.MILLISECONDS) ?: fail("nothing from the SDK within $timeoutMillis ms")
            return result.getOrElse { fail("the SDK's frame did not decode: $it", it) }
        }

        inline fun <reified T : Message> expect(timeoutMillis: Long = 5_000): T {
            val message = receive(timeoutMillis)
            return message as? T ?: fail("expected a ${T::class.simpleName}, got $message")
        }

        /** Waits for the SDK to end the connection; returns the frame error that ended it. */
        fun expectEnd(timeoutMillis: Long = 5_000): FrameException {
            val result = received.poll(timeoutMillis, TimeUnit.MILLISECONDS) ?: fail("the SDK kept the connection open")
            return result.exceptionOrNull() as? FrameException ?: fail("expected the end of the stream, got ${result.getOrNull()}")
        }

        override fun close() = channel.close()
    }
}
