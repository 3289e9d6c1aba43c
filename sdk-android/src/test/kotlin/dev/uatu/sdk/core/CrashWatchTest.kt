package dev.uatu.sdk.core

import java.util.concurrent.CopyOnWriteArrayList
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test

/**
 * The JVM-wide watch Android uses, and the thread-group watch of JVM apps. The
 * tests of [ProcessCrashWatch] set the JVM's default handler; each gives back the
 * one it found, and counts only the exceptions it threw itself (by identity), so
 * a thread of another test dying meanwhile changes nothing.
 */
class CrashWatchTest {
    private val original: Thread.UncaughtExceptionHandler? = Thread.getDefaultUncaughtExceptionHandler()
    private val seenBefore = CopyOnWriteArrayList<Throwable>()

    /** Stands for Android's handler that ends the process: it must still see every exception. */
    private val before = Thread.UncaughtExceptionHandler { _, error -> seenBefore += error }

    @BeforeEach
    fun installRecordingDefault() {
        Thread.setDefaultUncaughtExceptionHandler(before)
    }

    @AfterEach
    fun restoreDefault() {
        Thread.setDefaultUncaughtExceptionHandler(original)
    }

    private fun dieWith(error: Throwable, group: ThreadGroup? = null) {
        Thread(group, { throw error }, "dying").apply { start(); join() }
    }

    private class Reports : Thread.UncaughtExceptionHandler {
        val seen = CopyOnWriteArrayList<Throwable>()
        override fun uncaughtException(thread: Thread, error: Throwable) {
            seen += error
        }
    }

    @Test
    fun `the process watch reports every thread's exception, then hands it to the handler it found, which it gives back`() {
        val reports = Reports()
        val watch = ProcessCrashWatch.watch(reports)
        val crash = IllegalStateException("crash")
        dieWith(crash)
        assertTrue(reports.seen.any { it === crash }, "not reported")
        assertTrue(seenBefore.any { it === crash }, "not handed on")
        watch.close()
        assertSame(before, Thread.getDefaultUncaughtExceptionHandler())
        val later = IllegalStateException("after the watch")
        dieWith(later)
        assertTrue(reports.seen.none { it === later }, "reported after close")
    }

    @Test
    fun `a report that throws still lets the handler before run`() {
        val watch = ProcessCrashWatch.watch { _, _ -> throw IllegalArgumentException("broken report") }
        try {
            val crash = IllegalStateException("crash")
            dieWith(crash)
            assertTrue(seenBefore.any { it === crash })
        } finally {
            watch.close()
        }
    }

    @Test
    fun `closed out of order, a watch stops reporting and the one it found comes back in the end`() {
        val first = Reports()
        val second = Reports()
        val firstWatch = ProcessCrashWatch.watch(first)
        val secondWatch = ProcessCrashWatch.watch(second)
        firstWatch.close() // not the current handler: it stays in the chain, silent
        val crash = IllegalStateException("crash")
        dieWith(crash)
        assertTrue(second.seen.any { it === crash })
        assertTrue(first.seen.none { it === crash }, "a closed watch reported")
        assertTrue(seenBefore.any { it === crash })
        secondWatch.close()
        assertSame(before, Thread.getDefaultUncaughtExceptionHandler(), "the closed watch was given back instead")
    }

    @Test
    fun `the app's threads are its group and the threads they start, and nothing else`() {
        val reports = Reports()
        val app = AppThreads("app")
        app.watch(reports).use {
            val own = IllegalStateException("on the app's thread")
            val child = IllegalStateException("on a thread the app started")
            app.newThread("app-main") { dieWith(child) ; throw own }.apply { start(); join() }
            val outside = IllegalStateException("elsewhere")
            dieWith(outside)
            assertEquals(listOf(child, own), reports.seen.toList())
            // Handled as without the watch: by the parent group, up to the default handler.
            assertTrue(seenBefore.containsAll(listOf(child, own, outside)))
        }
    }

    @Test
    fun `one agent at a time watches an app's threads`() {
        val app = AppThreads("app")
        app.watch(Reports()).use {
            val refused = runCatching { app.watch(Reports()) }.exceptionOrNull()
            assertTrue(refused is IllegalStateException && "already watched" in refused.message!!, "$refused")
        }
        app.watch(Reports()).close() // free again once closed
    }
}
