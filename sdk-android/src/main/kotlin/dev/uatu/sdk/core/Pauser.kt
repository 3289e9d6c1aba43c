package dev.uatu.sdk.core

import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/** Runs a task on the app's main thread at its next safe point (a frame boundary on Android). */
fun interface SafePoint {
    fun schedule(task: Runnable)
}

/** Builds the STATE answering a PAUSE, on the main thread; told afterwards whether it was delivered. */
interface StateSource {
    fun collect(id: Long, hierarchy: Boolean): Message.State
    fun settle(state: Message.State, delivered: Boolean)
}

/**
 * Pauses the main thread for the host. A PAUSE (from the client's reader thread)
 * schedules [hold] at the next safe point; there the STATE is collected and sent,
 * and the main thread then waits for the RESUME with that id, answers any newer
 * PAUSE at once (§4.5), and gives up after [holdTimeoutMillis] without a RESUME,
 * or as soon as the pausing connection ends: the app never hangs for a host
 * that died.
 */
class Pauser(
    private val safePoint: SafePoint,
    private val source: StateSource,
    private val holdTimeoutMillis: Long,
    private val log: LogBuffer,
) {
    private sealed interface Event { val connection: Long }
    private class PauseEvent(override val connection: Long, val id: Long, val hierarchy: Boolean, val reply: (Message.State) -> Boolean) : Event
    private class ResumeEvent(override val connection: Long, val id: Long) : Event
    private class DisconnectEvent(override val connection: Long) : Event

    private val events = LinkedBlockingQueue<Event>()
    private val lock = Any()
    private var scheduled = false

    /** The id of the pause the main thread is held in, if any (for tests and the harness). */
    @Volatile
    var pausedId: Long? = null
        private set

    /** Released pauses that ended without their RESUME (a timeout or a lost host). */
    @Volatile
    var abandonedPauses = 0L
        private set

    // The queue is unbounded: `add` never waits, so an interrupt of the client's thread (at stop)
    // cannot throw out of these calls the way `put` would.
    fun onPause(connection: Long, id: Long, hierarchy: Boolean, reply: (Message.State) -> Boolean) {
        synchronized(lock) {
            events.add(PauseEvent(connection, id, hierarchy, reply))
            if (!scheduled) {
                scheduled = true
                safePoint.schedule(::hold)
            }
        }
    }

    fun onResume(connection: Long, id: Long) = offerWhileScheduled(ResumeEvent(connection, id))

    fun onDisconnect(connection: Long) = offerWhileScheduled(DisconnectEvent(connection))

    /** A RESUME or a disconnect matters only to a pause that is scheduled or held. */
    private fun offerWhileScheduled(event: Event) {
        synchronized(lock) { if (scheduled) events.add(event) }
    }

    /**
     * Runs on the main thread at a safe point. An interrupt of the main thread
     * releases the pause like a lost host, and the interrupt is kept for the app
     * to see: the SDK never throws into the app's main thread.
     */
    private fun hold() {
        var current: PauseEvent? = null
        var deadline = 0L
        try {
            while (true) {
                val event = if (current == null) {
                    events.poll() ?: return
                } else {
                    val left = deadline - System.nanoTime()
                    events.poll(left.coerceAtLeast(0), TimeUnit.NANOSECONDS) ?: run {
                        abandonedPauses++
                        log.add(LogLevel.WARN, SDK_LOG_TAG, "uatu: no RESUME for PAUSE ${current.id} within $holdTimeoutMillis ms; the app goes on")
                        return
                    }
                }
                when (event) {
                    is PauseEvent -> {
                        val state = source.collect(event.id, event.hierarchy)
                        val delivered = event.reply(state)
                        source.settle(state, delivered)
                        current = if (delivered) event else null
                        pausedId = current?.id
                        deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(holdTimeoutMillis)
                    }
                    is ResumeEvent -> if (current != null && event.connection == current.connection && event.id == current.id) return
                    is DisconnectEvent -> if (current != null && event.connection == current.connection) {
                        abandonedPauses++
                        return
                    }
                }
            }
        } catch (e: InterruptedException) {
            abandonedPauses++
            log.add(LogLevel.WARN, SDK_LOG_TAG, "uatu: the main thread was interrupted during a pause; the app goes on")
            Thread.currentThread().interrupt()
        } finally {
            pausedId = null
            synchronized(lock) {
                scheduled = events.any { it is PauseEvent }
                events.removeIf { it !is PauseEvent }
                if (scheduled) safePoint.schedule(::hold)
            }
        }
    }
}
