package dev.uatu.sdk.android

import android.content.Intent
import android.os.Handler
import android.os.Looper
import dev.uatu.sdk.Uatu
import dev.uatu.sdk.core.CAPABILITY_HIERARCHY
import dev.uatu.sdk.core.Message
import dev.uatu.sdk.core.TestHost
import dev.uatu.sdk.core.Transport
import dev.uatu.sdk.harness.UnixSocketTransport
import java.nio.file.Files
import java.time.Duration
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicReference
import kotlinx.serialization.json.JsonPrimitive
import org.junit.After
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertSame
import org.junit.Assert.assertTrue
import org.junit.Before
import org.junit.Test
import org.junit.runner.RunWith
import org.robolectric.Robolectric
import org.robolectric.RobolectricTestRunner
import org.robolectric.RuntimeEnvironment
import org.robolectric.Shadows.shadowOf
import org.robolectric.annotation.Config

/** The Android glue under Robolectric: the real Looper, Choreographer and Application. */
@RunWith(RobolectricTestRunner::class)
@Config(sdk = [34], application = DebugApp::class)
class GlueTest {
    private val dir = Files.createTempDirectory("uatu-glue")
    private val socket = dir.resolve("agent.sock")
    private var host: TestHost? = null

    @Before
    fun useUnixSocket() {
        AndroidGlue.testTransport = { UnixSocketTransport(socket) }
    }

    @After
    fun tearDown() {
        Uatu.agent.stop()
        AndroidGlue.testTransport = null
        host?.close()
        dir.toFile().deleteRecursively()
    }

    private fun launch(token: String?) {
        val intent = Intent(RuntimeEnvironment.getApplication(), PlainActivity::class.java)
        if (token != null) intent.putExtra(AndroidGlue.EXTRA_TOKEN, token)
        Robolectric.buildActivity(PlainActivity::class.java, intent).setup()
    }

    /** Lets the main looper run, frame by frame, until [done] or 10 s. */
    private fun runMainLooperUntil(done: () -> Boolean) {
        val deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos()
        while (!done() && System.nanoTime() < deadline) {
            shadowOf(Looper.getMainLooper()).idleFor(Duration.ofMillis(16))
            Thread.sleep(2)
        }
        assertTrue("timed out running the main looper", done())
    }

    @Test
    fun `the Application starts the SDK and the launch intent's token reaches HELLO`() {
        val host = TestHost(socket).also { host = it }
        assertFalse("no activity yet: the SDK waits for the launch intent", Uatu.agent.isStarted)
        launch(token = "run-token-1")
        val side = host.accept()
        val hello = side.expect<Message.Hello>()
        assertEquals("run-token-1", hello.token)
        assertEquals("android", hello.platform)
        assertEquals(RuntimeEnvironment.getApplication().packageName, hello.appId)
        assertEquals(listOf(CAPABILITY_HIERARCHY), hello.capabilities)
    }

    @Test
    fun `the pause happens in a frame callback on the main looper and holds it until RESUME`() {
        val host = TestHost(socket).also { host = it }
        val inFrameCallback = AtomicReference<String>()
        Uatu.extract("where") {
            val onMain = Looper.myLooper() == Looper.getMainLooper()
            val inFrame = Thread.currentThread().stackTrace.any { it.className == "android.view.Choreographer" && it.methodName == "doFrame" }
            "main=$onMain frame=$inFrame".also(inFrameCallback::set)
        }
        launch(token = "t")
        val side = host.accept().also { it.expect<Message.Hello>() }

        val ranDuringPause = AtomicBoolean(false)
        val ranAfterResume = AtomicBoolean(false)
        val resumed = AtomicBoolean(false)
        // The host's side fails the test, not the JVM's default handler, when one of its checks fails.
        val hostFailure = AtomicReference<Throwable>()
        val hostThread = Thread {
            try {
                hostSide(side, resumed, ranDuringPause, ranAfterResume)
            } catch (e: Throwable) {
                hostFailure.set(e)
            }
        }.apply { start() }

        runMainLooperUntil { ranAfterResume.get() || ranDuringPause.get() || hostFailure.get() != null }
        hostThread.join(10_000)
        hostFailure.get()?.let { throw AssertionError("the host side failed: $it", it) }
        assertEquals("main=true frame=true", inFrameCallback.get())
        assertFalse("a posted runnable ran while the main looper was paused", ranDuringPause.get())
        assertTrue(ranAfterResume.get())
    }

    /** PAUSE, STATE, a runnable posted while the main looper is held, RESUME. */
    private fun hostSide(side: TestHost.HostSide, resumed: AtomicBoolean, ranDuringPause: AtomicBoolean, ranAfterResume: AtomicBoolean) {
        side.send(Message.Pause(1))
        val state = side.expect<Message.State>()
        assertEquals(JsonPrimitive("DebugApp"), state.snapshots["app"])
        // The main looper is held: a runnable posted now must wait for RESUME.
        Handler(Looper.getMainLooper()).post {
            if (!resumed.get()) ranDuringPause.set(true) else ranAfterResume.set(true)
        }
        Thread.sleep(300)
        resumed.set(true)
        side.send(Message.Resume(1))
    }

    @Test
    fun `without a token in the launch intent nothing starts`() {
        val threadsBefore = Thread.getAllStackTraces().keys.count { it.name == "uatu-agent" }
        val handlerBefore = Thread.getDefaultUncaughtExceptionHandler()
        launch(token = null)
        shadowOf(Looper.getMainLooper()).idleFor(Duration.ofMillis(100))
        assertFalse(Uatu.agent.isStarted)
        assertEquals(threadsBefore, Thread.getAllStackTraces().keys.count { it.name == "uatu-agent" })
        assertSame("the crash handler was replaced", handlerBefore, Thread.getDefaultUncaughtExceptionHandler())
    }

    @Test
    fun `with a token but no host the app runs on and the SDK thread sleeps between attempts`() {
        val attempts = LinkedBlockingQueue<Long>()
        AndroidGlue.testTransport = { _ ->
            val missing = UnixSocketTransport(socket) // nobody listens on it
            Transport { attempts.add(System.nanoTime()); missing.connect() }
        }
        launch(token = "t")
        val ran = AtomicBoolean(false)
        Handler(Looper.getMainLooper()).post { ran.set(true) }
        shadowOf(Looper.getMainLooper()).idleFor(Duration.ofMillis(100))
        assertTrue("the main looper did not run", ran.get())
        assertTrue(Uatu.agent.isStarted)
        // 50 ms doubling: a busy machine only makes the gaps longer; a spinning thread makes them ~0.
        val times = List(4) { attempts.poll(10, TimeUnit.SECONDS) ?: throw AssertionError("only $it connection attempts in 10 s") }
        val gapsMillis = times.zipWithNext { a, b -> TimeUnit.NANOSECONDS.toMillis(b - a) }
        val backoff = listOf(50L, 100, 200)
        assertTrue("gaps $gapsMillis ms, expected at least $backoff", gapsMillis.zip(backoff).all { (gap, delay) -> gap >= delay })
        assertFalse(Uatu.agent.isConnected)
    }
}

/** A release build: `Uatu.start` is a no-op even when launched with a token. */
@RunWith(RobolectricTestRunner::class)
@Config(sdk = [34], application = ReleaseApp::class)
class ReleaseBuildTest {
    @Test
    fun `a release build never starts the SDK`() {
        val dir = Files.createTempDirectory("uatu-release")
        AndroidGlue.testTransport = { UnixSocketTransport(dir.resolve("agent.sock")) }
        try {
            val intent = Intent(RuntimeEnvironment.getApplication(), PlainActivity::class.java).putExtra(AndroidGlue.EXTRA_TOKEN, "t")
            Robolectric.buildActivity(PlainActivity::class.java, intent).setup()
            assertFalse(Uatu.agent.isStarted)
            assertTrue(Thread.getAllStackTraces().keys.none { it.name == "uatu-agent" })
        } finally {
            AndroidGlue.testTransport = null
            dir.toFile().deleteRecursively()
        }
    }
}
