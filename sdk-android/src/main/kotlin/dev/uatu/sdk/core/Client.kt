package dev.uatu.sdk.core

import java.io.Closeable
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream

/** One stream to the host. */
interface Connection : Closeable {
    val input: InputStream
    val output: OutputStream
}

/** How the SDK reaches the host: a Unix socket, an Android abstract socket, loopback TCP. */
fun interface Transport {
    /** Connects, or throws an [IOException] at once when nobody listens. */
    fun connect(): Connection
}

/** The delays between attempts to reach a host that is not there (yet). */
class Backoff(private val initialMillis: Long = 50, private val maxMillis: Long = 2_000) {
    private var next = initialMillis

    fun nextDelay(): Long = next.also { next = (next * 2).coerceAtMost(maxMillis) }

    fun reset() {
        next = initialMillis
    }
}

/**
 * Connects to the host on a daemon thread of its own, says HELLO, hands PAUSE
 * and RESUME to the [Pauser], and reconnects with [Backoff] when the host goes
 * away. Nothing it does blocks the app's threads or throws into them; a host
 * that refuses this SDK for good (wrong protocol version or token) is not
 * retried, and the refusal is logged.
 */
class Client(
    private val transport: Transport,
    private val hello: () -> Message.Hello,
    private val pauser: Pauser,
    private val log: LogBuffer,
    private val report: (LogLevel, String) -> Unit,
    private val backoff: Backoff = Backoff(),
) {
    @Volatile
    private var running = false
    private var thread: Thread? = null

    @Volatile
    private var current: Live? = null
    private var connections = 0L

    /** Why the host refused this SDK for good, if it did. */
    @Volatile
    var refusal: String? = null
        private set

    private class Live(val number: Long, val connection: Connection) {
        fun send(message: Message): Boolean = try {
            synchronized(this) { Frames.write(connection.output, message) }
            true
        } catch (e: IOException) {
            close()
            false
        }

        fun close() = try {
            connection.close()
        } catch (e: IOException) {
            // closing a broken stream: nothing left to do
        }
    }

    val isConnected: Boolean get() = current != null

    fun start() {
        synchronized(this) {
            if (running) return
            running = true
            thread = Thread(::run, "uatu-agent").apply {
                isDaemon = true
                start()
            }
        }
    }

    /** Stops trying; says GOODBYE to an attached host first. */
    fun stop(reason: String = "the app stopped the uatu SDK") {
        val thread = synchronized(this) {
            running = false
            thread.also { this.thread = null }
        }
        current?.let {
            it.send(Message.Goodbye(reason))
            it.close()
        }
        thread?.interrupt()
        try {
            thread?.join(1_000)
        } catch (e: InterruptedException) {
            // The app's thread that stops the SDK was interrupted: keep that for the app, stop waiting.
            Thread.currentThread().interrupt()
        }
    }

    /** Best effort from a dying thread (the crash handler): GOODBYE to the attached host, if any. */
    fun sayGoodbye(reason: String) {
        current?.send(Message.Goodbye(reason))
    }

    private fun run() {
        while (running) {
            val connection = try {
                transport.connect()
            } catch (e: IOException) {
                if (!sleep(backoff.nextDelay())) return
                continue
            } catch (e: SecurityException) {
                report(LogLevel.ERROR, "uatu cannot reach the host: ${e.message}")
                return
            }
            val live = Live(++connections, connection)
            val close = serve(live)
            current = null
            pauser.onDisconnect(live.number)
            if (close.goodbye != null) live.send(Message.Goodbye(close.goodbye))
            live.close()
            if (!running) return
            if (!close.reconnect) {
                refusal = close.why
                report(LogLevel.ERROR, "uatu: ${close.why}; not reconnecting")
                log.add(LogLevel.ERROR, SDK_LOG_TAG, "uatu: ${close.why}")
                running = false
                return
            }
            if (!sleep(backoff.nextDelay())) return
        }
    }

    private fun serve(live: Live): Session.Action.Close {
        val session = Session()
        if (!live.send(hello())) return Session.Action.Close("the host closed the connection before HELLO", null, reconnect = true)
        current = live
        while (running) {
            val action = try {
                session.onMessage(Frames.read(live.connection.input))
            } catch (e: FrameException) {
                session.onFrameError(e)
            } catch (e: IOException) {
                session.onFrameError(FrameException(FrameException.Kind.CLOSED, "connection lost: ${e.message}", e))
            }
            when (action) {
                is Session.Action.Pause -> {
                    backoff.reset()
                    pauser.onPause(live.number, action.id, action.hierarchy) { state -> live.send(state) }
                }
                is Session.Action.Resume -> pauser.onResume(live.number, action.id)
                is Session.Action.Close -> return action
            }
        }
        return Session.Action.Close("the SDK stopped", null, reconnect = false)
    }

    private fun sleep(millis: Long): Boolean = try {
        Thread.sleep(millis)
        running
    } catch (e: InterruptedException) {
        false
    }
}
