package dev.uatu.sdk.harness

import dev.uatu.sdk.core.AppThreads
import dev.uatu.sdk.core.SafePoint
import java.util.concurrent.CountDownLatch
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * A JVM stand-in for an app's main looper: one thread running posted tasks in
 * order. Between two tasks is its safe point, as between two messages of
 * Android's main looper. Its thread, and every thread started from it, are the
 * app's [threads]: hand them to the agent (`AgentOptions.crashes`) so that their
 * uncaught exceptions, and only theirs, are the app's crashes.
 */
class MainLoop(name: String = "main", parent: ThreadGroup = Thread.currentThread().threadGroup) : SafePoint, AutoCloseable {
    private val tasks = LinkedBlockingQueue<Runnable>()

    val threads = AppThreads("app-$name", parent)

    @Volatile
    private var running = true
    val thread = threads.newThread(name, ::loop).apply {
        isDaemon = true
        start()
    }

    override fun schedule(task: Runnable) = post(task)

    fun post(task: Runnable) {
        tasks.add(task) // unbounded: never waits, so an interrupted poster does not throw
    }

    /** Runs [task] on the loop and waits for it; false if it did not run within [timeoutMillis]. */
    fun runAndWait(timeoutMillis: Long, task: () -> Unit = {}): Boolean {
        val done = CountDownLatch(1)
        post {
            task()
            done.countDown()
        }
        return done.await(timeoutMillis, TimeUnit.MILLISECONDS)
    }

    private fun loop() {
        while (running) {
            val task = try {
                tasks.take()
            } catch (e: InterruptedException) {
                return
            }
            task.run()
        }
    }

    /** Ends the loop after the task it runs (a pause it holds is released) and waits a moment for its end. */
    override fun close() {
        running = false
        thread.interrupt()
        thread.join(5_000)
    }
}
