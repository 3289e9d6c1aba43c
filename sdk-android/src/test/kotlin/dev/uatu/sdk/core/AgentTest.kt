package dev.uatu.sdk.core

import dev.uatu.sdk.harness.MainLoop
import dev.uatu.sdk.harness.UnixSocketTransport
import java.io.File
import java.nio.file.Path
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir

/** The core against a real Unix socket: handshake, pauses, reconnection, errors, crashes. */
class AgentTest {
    @TempDir
    lateinit var dir: Path

    private val main = MainLoop()
    private val agents = mutableListOf<Agent>()
    private val hosts = mutableListOf<TestHost>()

    @AfterEach
    fun tearDown() {
        agents.asReversed().forEach { it.stop() }
        hosts.forEach { it.close() }
        main.close()
    }

    private val socket get() = dir.resolve("agent.sock")

    private fun host() = TestHost(socket).also { hosts += it }

    private fun agent(
        token: String? = "t0ken",
        holdTimeoutMillis: Long = 10_000,
        crashFile: File? = null,
        protocolVersion: Long = PROTOCOL_VERSION,
        transport: Transport = UnixSocketTransport(socket),
        setup: Agent.() -> Unit = {},
    ): Agent {
        val agent = Agent(clock = { 1_000 })
        agent.setup()
        agent.start(
            AgentOptions(
                transport = transport,
                safePoint = main,
                appId = "app.test",
                platform = "jvm",
                token = token,
                crashFile = crashFile,
                holdTimeoutMillis = holdTimeoutMillis,
                protocolVersion = protocolVersion,
                backoff = Backoff(initialMillis = 20, maxMillis = 200),
            ),
        )
        agents += agent
        return agent
    }

    /** Posts a task on the main loop; the latch opens when it has run. */
    private fun postMarker(): CountDownLatch = CountDownLatch(1).also { latch -> main.post { latch.countDown() } }

    @Test
    fun `HELLO names the SDK and the token, and PAUSE gets STATE and holds the main loop until RESUME`() {
        val host = host()
        agent { extract("route") { "ledger" }; extract("count") { 3 } }
        val side = host.accept()
        val hello = side.expect<Message.Hello>()
        assertEquals(Message.Hello(PROTOCOL_VERSION, Agent.SDK_VERSION, "jvm", "app.test", "t0ken"), hello)

        side.send(Message.Pause(1))
        val state = side.expect<Message.State>()
        assertEquals(1, state.id)
        assertEquals(buildJsonObject { put("route", "ledger"); put("count", 3) }, state.snapshots)
        assertNull(state.coverage, "no coverage source: the field is absent")

        val marker = postMarker()
        assertFalse(marker.await(300, TimeUnit.MILLISECONDS), "a task ran on the main loop while it was paused")
        side.send(Message.Resume(2)) // not the pause it is in: ignored
        assertFalse(marker.await(200, TimeUnit.MILLISECONDS), "a RESUME of another id ended the pause")
        side.send(Message.Resume(1))
        assertTrue(marker.await(2, TimeUnit.SECONDS), "RESUME did not release the main loop")
    }

    @Test
    fun `a PAUSE during a pause is answered at once and the pause goes on under the new id`() {
        val host = host()
        var reads = 0
        agent { extract("reads") { ++reads } }
        val side = host.accept().also { it.expect<Message.Hello>() }
        side.send(Message.Pause(1))
        assertEquals(JsonPrimitive(1), side.expect<Message.State>().snapshots["reads"])
        side.send(Message.Pause(2))
        val second = side.expect<Message.State>()
        assertEquals(2, second.id)
        assertEquals(JsonPrimitive(2), second.snapshots["reads"], "the second STATE is read afresh")
        val marker = postMarker()
        side.send(Message.Resume(1))
        assertFalse(marker.await(200, TimeUnit.MILLISECONDS), "RESUME of the superseded pause ended it")
        side.send(Message.Resume(2))
        assertTrue(marker.await(2, TimeUnit.SECONDS))
    }

    @Test
    fun `without a RESUME the pause times out and the main loop goes on`() {
        val host = host()
        val agent = agent(holdTimeoutMillis = 300)
        val side = host.accept().also { it.expect<Message.Hello>() }
        side.send(Message.Pause(1))
        side.expect<Message.State>()
        val marker = postMarker()
        assertTrue(marker.await(5, TimeUnit.SECONDS), "the main loop stayed paused after the hold timeout")
        // The next STATE tells the host what happened.
        side.send(Message.Pause(2))
        val logs = side.expect<Message.State>().logs
        assertTrue(logs.any { it.level == LogLevel.WARN && "no RESUME for PAUSE 1" in it.message }, "$logs")
        side.send(Message.Resume(2))
        assertTrue(agent.isConnected)
    }

    @Test
    fun `the host going away releases a pause at once, and the SDK reconnects to a restarted host`() {
        val first = host()
        agent(holdTimeoutMillis = 60_000) { extract("x") { 1 } }
        val side = first.accept().also { it.expect<Message.Hello>() }
        side.send(Message.Pause(1))
        side.expect<Message.State>()
        val marker = postMarker()
        first.close() // the host process dies: its socket and its connection go
        assertTrue(marker.await(5, TimeUnit.SECONDS), "the main loop stayed paused for a host that died")

        val second = host() // the host restarts on the same path
        val again = second.accept(10_000)
        assertEquals("app.test", again.expect<Message.Hello>().appId)
        again.send(Message.Pause(7))
        assertEquals(JsonPrimitive(1), again.expect<Message.State>().snapshots["x"])
        again.send(Message.Resume(7))
    }

    @Test
    fun `with no host listening nothing is thrown and the SDK backs off instead of spinning`() {
        val attempts = AtomicInteger()
        val missing = UnixSocketTransport(socket)
        val agent = agent(transport = { attempts.incrementAndGet(); missing.connect() })
        Thread.sleep(1_000)
        assertFalse(agent.isConnected)
        // 20 ms doubling up to 200 ms: about 8 attempts in a second; a spinning client makes thousands.
        assertTrue(attempts.get() in 1..15, "${attempts.get()} connection attempts in one second")
        assertTrue(main.runAndWait(1_000), "the main loop is blocked")
    }

    @Test
    fun `a throwing extractor is reported as an exception and the others still read`() {
        val host = host()
        agent {
            extract("ok") { "fine" }
            extract("boom") { error("no ledger yet") }
        }
        val side = host.accept().also { it.expect<Message.Hello>() }
        side.send(Message.Pause(1))
        val state = side.expect<Message.State>()
        assertEquals(setOf("ok"), state.snapshots.keys)
        val exception = state.exceptions.single()
        assertEquals("java.lang.IllegalStateException", exception.className)
        assertEquals("in uatu extractor \"boom\": no ledger yet", exception.message)
        assertTrue("AgentTest" in exception.stack)
        side.send(Message.Resume(1))
        assertTrue(main.runAndWait(2_000), "the main loop died with the extractor")
    }

    @Test
    fun `a value that cannot be serialised becomes an error log line naming the extractor and the path`() {
        val host = host()
        agent {
            extract("good") { mapOf("list" to listOf(1, 2.5, null, "s")) }
            extract("bad") { mapOf("screen" to listOf("a", Thread.currentThread())) }
        }
        val side = host.accept().also { it.expect<Message.Hello>() }
        side.send(Message.Pause(1))
        val state = side.expect<Message.State>()
        assertEquals(setOf("good"), state.snapshots.keys)
        val line = state.logs.single { it.level == LogLevel.ERROR }
        assertEquals(SDK_LOG_TAG, line.tag)
        assertTrue("\"bad\"" in line.message && "at $.screen[1]" in line.message && "java.lang.Thread" in line.message, line.message)
        side.send(Message.Resume(1))
    }

    @Test
    fun `reportError and logs arrive in the next STATE only`() {
        val host = host()
        val agent = agent()
        val side = host.accept().also { it.expect<Message.Hello>() }
        agent.reportError(IllegalArgumentException("caught but wrong"))
        agent.log(LogLevel.INFO, "ledger", "opened")
        side.send(Message.Pause(1))
        val state = side.expect<Message.State>()
        assertEquals("caught but wrong", state.exceptions.single().message)
        assertEquals(LogEntry(1_000, LogLevel.INFO, "ledger", "opened"), state.logs.single())
        side.send(Message.Resume(1))
        side.send(Message.Pause(2))
        val next = side.expect<Message.State>()
        assertTrue(next.exceptions.isEmpty() && next.logs.isEmpty(), "$next")
        side.send(Message.Resume(2))
    }

    @Test
    fun `a version mismatch GOODBYE is reported and not retried`() {
        val host = host()
        val agent = agent(protocolVersion = 2)
        val side = host.accept()
        assertEquals(2, side.expect<Message.Hello>().protocolVersion)
        side.send(Message.Goodbye("protocol version mismatch: the host speaks version 1, the app's SDK speaks version 2"))
        side.close()
        host.acceptNone(withinMillis = 800)
        val refusal = agent.refusal ?: fail("the refusal was not recorded")
        assertTrue("version 1" in refusal && "version 2" in refusal, refusal)
    }

    @Test
    fun `a token refusal is not retried, another GOODBYE is`() {
        val host = host()
        val agent = agent(token = "wrong")
        val side = host.accept().also { it.expect<Message.Hello>() }
        side.send(Message.Goodbye("another app is attached"))
        side.close()
        val again = host.accept()
        again.expect<Message.Hello>()
        again.send(Message.Goodbye("run token mismatch: the app's token is not this run's"))
        again.close()
        host.acceptNone(withinMillis = 800)
        assertTrue(agent.refusal!!.contains("run token mismatch"))
    }

    @Test
    fun `an unreadable frame from the host gets a GOODBYE naming it, then the SDK reconnects`() {
        val host = host()
        agent()
        val side = host.accept().also { it.expect<Message.Hello>() }
        side.sendBytes(byteArrayOf(0, 0, 0, 5) + "[1,2]".toByteArray())
        val goodbye = side.expect<Message.Goodbye>()
        assertTrue("unreadable frame from the host" in goodbye.reason && "object" in goodbye.reason, goodbye.reason)
        side.expectEnd()
        host.accept().expect<Message.Hello>()
    }

    @Test
    fun `an uncaught exception chains to the previous handler, says GOODBYE, and the next process delivers it once`() {
        val crashFile = dir.resolve("crash/pending.json").toFile()
        val host = host()
        val chained = CountDownLatch(1)
        var seenByPrevious: Throwable? = null
        val previous = Thread.getDefaultUncaughtExceptionHandler()
        Thread.setDefaultUncaughtExceptionHandler { _, e -> seenByPrevious = e; chained.countDown() }
        try {
            val dying = agent(crashFile = crashFile)
            val side = host.accept().also { it.expect<Message.Hello>() }
            Thread { throw IllegalStateException("note too long") }.apply { start(); join() }
            assertTrue(chained.await(2, TimeUnit.SECONDS), "the previous handler was not called")
            assertEquals("note too long", seenByPrevious?.message)
            assertEquals("crash: java.lang.IllegalStateException: note too long", side.expect<Message.Goodbye>().reason)
            assertTrue(crashFile.exists(), "the crash was not persisted")
            dying.stop()
            side.close()

            // The next process: a new agent on the same crash file.
            agent(crashFile = crashFile)
            val next = host.accept().also { it.expect<Message.Hello>() }
            next.send(Message.Pause(1))
            val crash = next.expect<Message.State>().exceptions.single()
            assertEquals("java.lang.IllegalStateException", crash.className)
            assertEquals("note too long", crash.message)
            assertTrue("AgentTest" in crash.stack)
            // Deleted by the main thread once the STATE is written, which may be just after the host reads it.
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5)
            while (crashFile.exists() && System.nanoTime() < deadline) Thread.sleep(10)
            assertFalse(crashFile.exists(), "a delivered crash was kept")
            next.send(Message.Resume(1))
            next.send(Message.Pause(2))
            assertTrue(next.expect<Message.State>().exceptions.isEmpty(), "the crash was delivered twice")
            next.send(Message.Resume(2))
        } finally {
            agents.asReversed().forEach { it.stop() } // each gives back the handler it found
            Thread.setDefaultUncaughtExceptionHandler(previous)
        }
    }

    @Test
    fun `the hierarchy is sent only when asked and only by an SDK that advertised it`() {
        val host = host()
        val screen = Hierarchy(Node(className = "android.widget.FrameLayout", bounds = Bounds(0, 0, 10, 20)), 10, 20)
        val agent = Agent(clock = { 0 })
        agent.start(AgentOptions(UnixSocketTransport(socket), main, "app.test", "jvm", hierarchy = { screen }))
        agents += agent
        val side = host.accept()
        assertEquals(listOf(CAPABILITY_HIERARCHY), side.expect<Message.Hello>().capabilities)
        side.send(Message.Pause(1))
        assertNull(side.expect<Message.State>().hierarchy)
        side.send(Message.Pause(2, hierarchy = true))
        assertEquals(screen, side.expect<Message.State>().hierarchy)
        side.send(Message.Resume(2))
    }
}
