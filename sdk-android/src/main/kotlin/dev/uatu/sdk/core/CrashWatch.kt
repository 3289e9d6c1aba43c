package dev.uatu.sdk.core

import java.util.concurrent.atomic.AtomicReference

/**
 * Which threads are the app's, and how their uncaught exceptions reach the
 * [Agent]. An uncaught exception on one of the app's threads is the app's crash
 * (`proto/agent.md` §5); one on any other thread of the JVM is none of the SDK's
 * business and is never reported.
 */
fun interface CrashWatch {
    /**
     * Hands every uncaught exception of the app's threads to [report], then lets
     * it go where it would have gone without the SDK; until the returned handle is
     * closed. [report] must not throw and must not end the thread's dying.
     */
    fun watch(report: Thread.UncaughtExceptionHandler): AutoCloseable
}

/**
 * Every thread of the process is the app's: what an app process is on Android,
 * where an uncaught exception on any thread ends the process (the runtime's
 * default handler, `RuntimeInit.KillApplicationHandler`, logs `FATAL EXCEPTION`
 * and kills it). The watch is the JVM's default uncaught-exception handler, in
 * front of the one it found, which still runs after the report.
 *
 * Closing gives back the handler it found. When another handler was installed
 * over it since (and may chain to it), it stays in that chain but reports
 * nothing any more, and a later close that would give it back skips it.
 */
object ProcessCrashWatch : CrashWatch {
    private class Reporting(
        val previous: Thread.UncaughtExceptionHandler?,
        val report: Thread.UncaughtExceptionHandler,
    ) : Thread.UncaughtExceptionHandler {
        @Volatile
        var active = true

        override fun uncaughtException(thread: Thread, error: Throwable) {
            try {
                if (active) report.uncaughtException(thread, error)
            } catch (e: Throwable) {
                // A dying thread: whatever went wrong in the report, the handler before must still run.
            } finally {
                if (previous != null) previous.uncaughtException(thread, error) else printUncaught(thread, error)
            }
        }
    }

    override fun watch(report: Thread.UncaughtExceptionHandler): AutoCloseable = synchronized(this) {
        val handler = Reporting(Thread.getDefaultUncaughtExceptionHandler(), report)
        Thread.setDefaultUncaughtExceptionHandler(handler)
        AutoCloseable { stop(handler) }
    }

    private fun stop(handler: Reporting) = synchronized(this) {
        handler.active = false
        if (Thread.getDefaultUncaughtExceptionHandler() !== handler) return
        var previous = handler.previous
        while (previous is Reporting && !previous.active) previous = previous.previous
        Thread.setDefaultUncaughtExceptionHandler(previous)
    }
}

/**
 * The app's threads when the app is not the whole JVM (the JVM harness, the
 * tests, the fake device's app inside the sidecar): the threads of this group,
 * that is, those created in it and every thread they start (a new thread joins
 * the group of the thread that creates it). An uncaught exception on one of them
 * is reported, then handled as [parent] handles it (by default through the JVM's
 * default handler, which prints it).
 */
class AppThreads(name: String, parent: ThreadGroup = Thread.currentThread().threadGroup) : ThreadGroup(parent, name), CrashWatch {
    private val reporter = AtomicReference<Thread.UncaughtExceptionHandler?>()

    /** A thread of the app (not started). */
    fun newThread(name: String, body: Runnable): Thread = Thread(this, body, name)

    /** One agent at a time watches an app's threads. */
    override fun watch(report: Thread.UncaughtExceptionHandler): AutoCloseable {
        check(reporter.compareAndSet(null, report)) { "the threads of $name are already watched by another agent" }
        return AutoCloseable { reporter.compareAndSet(report, null) }
    }

    override fun uncaughtException(thread: Thread, error: Throwable) {
        try {
            reporter.get()?.uncaughtException(thread, error)
        } catch (e: Throwable) {
            // As for ProcessCrashWatch: the usual handling must still happen.
        } finally {
            super.uncaughtException(thread, error)
        }
    }
}

/** What the JVM prints for an uncaught exception when no handler is set. */
internal fun printUncaught(thread: Thread, error: Throwable) {
    System.err.print("Exception in thread \"${thread.name}\" ")
    error.printStackTrace(System.err)
}
