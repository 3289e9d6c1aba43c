package dev.uatu.sdk.harness

import dev.uatu.sdk.core.SafePoint
import java.util.concurrent.CountDownLatch
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * A JVM stand-in for an app's main looper: one thread running posted tasks in
 * order. Between two tasks is its safe point, as between two messages of
 * Android's main looper.
 */
class MainLoop(name: String = "main") : SafePoint, AutoCloseable {
    private val tasks = LinkedBlockingQueue<Runnable>()

    @Volatile
    private var running = true
    val thread = Thread(::loop, name).apply {
        isDaemon = true
        start()
    }

    override fun schedule(task: Runnable) = post(task)

    fun post(task: Runnable) {
        tasks.put(task)
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

    override fun close() {
        running = false
        thread.interrupt()
    }
}
