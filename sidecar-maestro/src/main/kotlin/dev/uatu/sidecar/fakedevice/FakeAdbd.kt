package dev.uatu.sidecar.fakedevice

import dev.uatu.sdk.core.Connection
import dev.uatu.sidecar.adb.ScriptedDevice
import java.io.BufferedOutputStream
import java.io.EOFException
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.net.SocketException
import java.security.SecureRandom
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.Semaphore
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * A fake device's adbd: the ADB transport protocol on a loopback TCP port, the
 * way an emulator or a phone in TCP mode (`adb tcpip`) offers it, so that the
 * real ADB server attaches it with `adb connect 127.0.0.1:PORT` and every client
 * of that server (the sidecar through dadb, `adb shell`, `adb reverse`) reaches
 * [device] exactly as it would reach a device.
 *
 * Services: `shell:` (raw) and `shell,v2` (the packet protocol with exit codes),
 * `exec:`, `sync:` (STAT, SEND, RECV, LIST, QUIT), `reverse:` (forward,
 * killforward, killforward-all, list-forward). Connections the app makes to a
 * reverse-forwarded device socket are opened towards the ADB server
 * (`OPEN tcp:PORT`), which connects them to the host port, as adbd does.
 *
 * What devices do that a clean fake would not: output is cut at arbitrary byte
 * boundaries ([Options.chunking]); a connection can be refused until a key is
 * accepted ([Auth]); the device can go away mid-run ([goOffline]).
 */
class FakeAdbd(private val device: ScriptedDevice, private val options: Options = Options()) : AutoCloseable {
    /** Whether a connecting ADB server must authenticate (`AUTH`) before the device is `device`. */
    enum class Auth {
        /** No AUTH: the device answers CNXN at once (an emulator, `ro.adb.secure=0`). */
        NONE,

        /**
         * AUTH, and the first public key offered is accepted and kept, as when the user
         * taps "Always allow": later connections signing with it get in without a prompt.
         */
        ACCEPT,

        /** AUTH, and no key is ever accepted: `adb devices` lists the device as `unauthorized`. */
        REFUSE,
    }

    data class Options(
        val auth: Auth = Auth.NONE,
        val chunking: Chunking = Chunking.whole(),
        /** The largest payload this side accepts; the ADB server's is used when smaller. */
        val maxPayload: Int = 256 * 1024,
        /** `ro.product.*` of the CNXN banner. */
        val product: String = "uatu_fake",
        val model: String = "uatu fake device",
    )

    private val server = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
    private val transports = CopyOnWriteArrayList<Transport>()

    /** The keys the user allowed ("Always allow from this computer"). */
    private val allowedKeys = CopyOnWriteArrayList<AdbPublicKey>()

    @Volatile
    private var offline = false

    @Volatile
    private var closed = false

    /** The loopback port: `adb connect 127.0.0.1:PORT`. */
    val port: Int = server.localPort

    /** The serial the ADB server gives a device attached by `adb connect`. */
    val serial: String = "127.0.0.1:$port"

    /** How many times a server offered its public key: the "Allow USB debugging?" prompts shown. */
    val keyPrompts = AtomicInteger()

    /** Every service an ADB server opened, in order (shell commands as `shell,v2,raw:CMD`). */
    val opened: MutableList<String> = CopyOnWriteArrayList()

    /** The services whose stream the ADB server closed before they were done: commands abandoned by their caller. */
    val abandoned: MutableList<String> = CopyOnWriteArrayList()

    init {
        device.reverseConnector = ScriptedDevice.ReverseConnector { hostPort ->
            val transport = transports.lastOrNull { it.online } ?: throw IOException("connection refused: the device is not attached to an ADB server")
            transport.openToHost("tcp:$hostPort")
        }
        // Dropping the connections from the device's own thread would wait on it: another thread does.
        device.onOffline = { Thread(::goOffline, "fake-adbd-offline $port").start() }
        Thread(::accept, "fake-adbd-accept $port").apply { isDaemon = true }.start()
    }

    private fun accept() {
        while (!closed) {
            val socket = try {
                server.accept()
            } catch (e: IOException) {
                return
            }
            if (offline) {
                socket.close()
                continue
            }
            val transport = Transport(socket)
            transports += transport
            Thread(transport::run, "fake-adbd-transport $port").apply { isDaemon = true }.start()
        }
    }

    /**
     * The device goes away, as when its cable is pulled or the emulator dies: every
     * connection ends at once and new ones are dropped; the ADB server then lists
     * it as `offline` or not at all.
     */
    fun goOffline() {
        offline = true
        transports.forEach { it.close() }
    }

    /** The device answers again (reconnected); the ADB server attaches it on its next attempt. */
    fun comeBack() {
        offline = false
    }

    override fun close() {
        closed = true
        server.close()
        transports.forEach { it.close() }
    }

    /** One connection from an ADB server. */
    private inner class Transport(private val socket: Socket) {
        private val output = BufferedOutputStream(socket.getOutputStream())
        private val streams = ConcurrentHashMap<Int, Stream>()
        private val nextId = AtomicInteger(1)
        private var maxPayload = options.maxPayload

        @Volatile
        var online = false
            private set

        fun send(message: AdbMessage) = synchronized(output) {
            output.write(message.encode())
            output.flush()
        }

        fun run() {
            try {
                val input = socket.getInputStream().buffered()
                handshake(input)
                while (true) dispatch(AdbMessage.read(input, maxPayload))
            } catch (e: AdbProtocolException) {
                System.err.println("fake-adbd $port: dropping the connection: ${e.message}")
            } catch (e: IOException) {
                // The server went away, or we did (goOffline, close).
            } finally {
                close()
            }
        }

        private fun handshake(input: InputStream) {
            val hello = AdbMessage.read(input, options.maxPayload)
            if (hello.command != AdbMessage.CNXN) throw AdbProtocolException("expected CNXN, got $hello")
            maxPayload = minOf(options.maxPayload, hello.arg1)
            if (options.auth != Auth.NONE) authenticate(input)
            val banner = "device::ro.product.name=${options.product};ro.product.model=${options.model};" +
                "ro.product.device=${options.product};features=$FEATURES"
            send(AdbMessage(AdbMessage.CNXN, AdbMessage.VERSION, options.maxPayload, AdbMessage.text(banner)))
            online = true
        }

        /**
         * As adbd does: a token to sign, accepted when signed by a key allowed before;
         * otherwise the server offers its public key, and the prompt is answered
         * ([Auth.ACCEPT]) or never ([Auth.REFUSE]: the server lists the device as `unauthorized`).
         */
        private fun authenticate(input: InputStream) {
            while (true) {
                val token = ByteArray(TOKEN_SIZE).also(SecureRandom()::nextBytes)
                send(AdbMessage(AdbMessage.AUTH, AdbMessage.AUTH_TOKEN, 0, token))
                val answer = AdbMessage.read(input, maxPayload)
                if (answer.command != AdbMessage.AUTH) throw AdbProtocolException("expected AUTH, got $answer")
                when (answer.arg0) {
                    AdbMessage.AUTH_SIGNATURE -> if (allowedKeys.any { it.signed(token, answer.payload) }) return
                    AdbMessage.AUTH_RSA_PUBLIC_KEY -> {
                        keyPrompts.incrementAndGet()
                        if (options.auth == Auth.ACCEPT) {
                            allowedKeys += AdbPublicKey.parse(answer.payloadText)
                            return
                        }
                        while (true) AdbMessage.read(input, maxPayload) // the prompt stays unanswered
                    }
                }
            }
        }

        private fun dispatch(message: AdbMessage) {
            when (message.command) {
                AdbMessage.OPEN -> open(message.arg0, message.payloadText)
                AdbMessage.OKAY -> streams[message.arg1]?.onOkay(message.arg0)
                AdbMessage.WRTE -> streams[message.arg1]?.let { stream ->
                    stream.onData(message.payload)
                    send(AdbMessage(AdbMessage.OKAY, stream.localId, message.arg0))
                }
                AdbMessage.CLSE -> streams[message.arg1]?.onPeerClosed()
                // SYNC, and anything newer, is not needed here.
                else -> Unit
            }
        }

        private fun open(remoteId: Int, destination: String) {
            opened += destination
            val service = DeviceServices.service(destination, device, options.chunking)
            if (service == null) {
                send(AdbMessage(AdbMessage.CLSE, 0, remoteId))
                return
            }
            val stream = Stream(this, nextId.getAndIncrement()).also { it.remoteId = remoteId; it.destination = destination }
            streams[stream.localId] = stream
            send(AdbMessage(AdbMessage.OKAY, stream.localId, remoteId))
            stream.worker = Thread({
                try {
                    service.serve(stream)
                } catch (e: IOException) {
                    // The server closed the stream, or the device went offline.
                } catch (e: InterruptedException) {
                    // Closed while the command ran: the command dies with its stream, as with SIGHUP.
                } finally {
                    stream.close()
                }
            }, "fake-adbd $destination").apply { isDaemon = true; start() }
        }

        /** A stream the device opens towards the ADB server, which connects it to `destination` on the host. */
        fun openToHost(destination: String): Connection {
            val stream = Stream(this, nextId.getAndIncrement())
            streams[stream.localId] = stream
            send(AdbMessage(AdbMessage.OPEN, stream.localId, 0, AdbMessage.text(destination)))
            if (!stream.awaitOpened()) {
                streams.remove(stream.localId)
                throw IOException("connection refused: the ADB server could not open $destination")
            }
            return object : Connection {
                override val input: InputStream = stream.input
                override val output: OutputStream = stream.output
                override fun close() = stream.close()
            }
        }

        fun forget(stream: Stream) {
            streams.remove(stream.localId)
        }

        fun close() {
            online = false
            transports.remove(this)
            try {
                socket.close()
            } catch (e: IOException) {
                // already closed
            }
            streams.values.forEach { it.onPeerClosed() }
        }

        val payloadLimit: Int get() = maxPayload
    }

    /**
     * One stream of a transport: what the peer writes arrives in [input]; what is
     * written to [output] goes out as WRTE messages, each waiting for the peer's
     * OKAY as the protocol's flow control requires.
     */
    private inner class Stream(private val transport: Transport, val localId: Int) : ServiceStream {
        @Volatile
        var remoteId = 0

        @Volatile
        var worker: Thread? = null

        /** The service it serves, for [abandoned]. */
        var destination = ""

        private val received = LinkedBlockingQueue<ByteArray>()
        private val okays = Semaphore(0)
        private val opened = Semaphore(0)

        @Volatile
        private var peerClosed = false

        @Volatile
        private var closedHere = false

        fun onOkay(peerId: Int) {
            if (remoteId == 0) {
                remoteId = peerId
                opened.release()
            } else {
                okays.release()
            }
        }

        fun onData(bytes: ByteArray) {
            received.add(bytes)
        }

        fun onPeerClosed() {
            if (peerClosed) return
            peerClosed = true
            received.add(END)
            okays.release(Int.MAX_VALUE / 2)
            opened.release()
            transport.forget(this)
            if (!closedHere) {
                closedHere = true
                if (worker?.isAlive == true) abandoned += destination
                worker?.interrupt()
                if (remoteId != 0) sendQuietly(AdbMessage(AdbMessage.CLSE, localId, remoteId))
            }
        }

        fun awaitOpened(): Boolean {
            opened.acquire()
            return remoteId != 0 && !peerClosed
        }

        fun write(bytes: ByteArray) {
            for (piece in options.chunking.split(bytes, transport.payloadLimit)) {
                if (piece.isEmpty()) continue
                if (peerClosed || closedHere) throw IOException("stream closed")
                transport.send(AdbMessage(AdbMessage.WRTE, localId, remoteId, piece))
                if (!okays.tryAcquire(OKAY_TIMEOUT_SECONDS, TimeUnit.SECONDS)) throw IOException("no OKAY from the ADB server")
                if (peerClosed) throw IOException("stream closed")
            }
        }

        fun close() {
            if (closedHere) return
            closedHere = true
            transport.forget(this)
            if (remoteId != 0 && !peerClosed) sendQuietly(AdbMessage(AdbMessage.CLSE, localId, remoteId))
            received.add(END)
        }

        private fun sendQuietly(message: AdbMessage) = try {
            transport.send(message)
        } catch (e: IOException) {
            // The transport is gone: so is the stream.
        }

        override val input: InputStream = object : InputStream() {
            private var current = ByteArray(0)
            private var position = 0

            override fun read(): Int {
                val one = ByteArray(1)
                return if (read(one, 0, 1) < 0) -1 else one[0].toInt() and 0xFF
            }

            override fun read(buffer: ByteArray, offset: Int, length: Int): Int {
                if (length == 0) return 0
                while (position >= current.size) {
                    val next = received.take()
                    if (next === END) {
                        received.add(END) // stays at the end for later reads
                        return -1
                    }
                    current = next
                    position = 0
                }
                val count = minOf(length, current.size - position)
                System.arraycopy(current, position, buffer, offset, count)
                position += count
                return count
            }
        }

        override val output: OutputStream = object : OutputStream() {
            override fun write(b: Int) = write(byteArrayOf(b.toByte()), 0, 1)

            override fun write(buffer: ByteArray, offset: Int, length: Int) =
                this@Stream.write(buffer.copyOfRange(offset, offset + length))

            override fun close() = this@Stream.close()
        }
    }

    companion object {
        /** What this fake adbd implements; `shell_v2` makes clients use the packet protocol with exit codes. */
        const val FEATURES = "shell_v2,cmd"
        private const val TOKEN_SIZE = 20
        private const val OKAY_TIMEOUT_SECONDS = 60L
        private val END = ByteArray(0)
    }
}
