package dev.uatu.sdk.core

import dev.uatu.sdk.harness.MainLoop
import dev.uatu.sdk.harness.UnixSocketTransport
import java.io.File
import java.nio.file.Path
import java.util.concurrent.CountDownLatch
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
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
        crashes: CrashWatch = main.threads,
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
                crashes = crashes,
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
        val attempts = LinkedBlockingQueue<Long>()
        val missing = UnixSocketTransport(socket)
        val agent = agent(transport = { attempts.add(System.nanoTime()); missing.connect() })
        // 20 ms doubling up to 200 ms. A busy machine only makes the gaps longer; a spinning client makes them ~0.
        val times = List(6) { attempts.poll(10, TimeUnit.SECONDS) ?: fail("only $it connection attempts in 10 s") }
        val gapsMillis = times.zipWithNext { a, b -> TimeUnit.NANOSECONDS.toMillis(b - a) }
        val backoff = listOf(20L, 40, 80, 160, 200)
        assertTrue(gapsMillis.zip(backoff).all { (gap, delay) -> gap >= delay }, "gaps $gapsMillis ms, expected at least $backoff")
        assertFalse(agent.isConnected)
        assertTrue(main.runAndWait(10_000), "the main loop is blocked")
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
        val refusal = awaitRefusal(agent)
        assertTrue("version 1" in refusal && "version 2" in refusal, refusal)
        host.acceptNone(withinMillis = 500)
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
        assertTrue(awaitRefusal(agent).contains("run token mismatch"))
        host.acceptNone(withinMillis = 500)
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

    /** The refusal, once the SDK's thread has recorded it (after which it never connects again). */
    private fun awaitRefusal(agent: Agent): String {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (agent.refusal == null && System.nanoTime() < deadline) Thread.sleep(10)
        return agent.refusal ?: fail("the refusal was not recorded within 10 s")
    }

    /** A thread group standing for what handles an uncaught exception after the SDK: it records them. */
    private class Recording(name: String) : ThreadGroup(name) {
        val uncaught = LinkedBlockingQueue<Throwable>()

        override fun uncaughtException(thread: Thread, error: Throwable) {
            uncaught.add(error)
        }
    }

    @Test
    fun `an uncaught exception on an app thread says GOODBYE, goes on to the usual handling, and the next process delivers it once`() {
        val crashFile = dir.resolve("crash/pending.json").toFile()
        val host = host()
        val process = Recording("process")
        val app = AppThreads("app", process)
        val dying = agent(crashFile = crashFile, crashes = app)
        val side = host.accept().also { it.expect<Message.Hello>() }
        app.newThread("worker") { throw IllegalStateException("note too long") }.apply { start(); join() }
        assertEquals("note too long", process.uncaught.poll(10, TimeUnit.SECONDS)?.message, "not handled as without the SDK")
        assertEquals("crash: java.lang.IllegalStateException: note too long", side.expect<Message.Goodbye>().reason)
        assertTrue(crashFile.exists(), "the crash was not persisted")
        dying.stop()
        side.close()

        // The next process: a new agent on the same crash file.
        agent(crashFile = crashFile, crashes = app)
        val next = host.accept().also { it.expect<Message.Hello>() }
        next.send(Message.Pause(1))
        val crash = next.expect<Message.State>().exceptions.single()
        assertEquals("java.lang.IllegalStateException", crash.className)
        assertEquals("note too long", crash.message)
        assertTrue("AgentTest" in crash.stack)
        // Deleted by the main thread once the STATE is written, which may be just after the host reads it.
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (crashFile.exists() && System.nanoTime() < deadline) Thread.sleep(10)
        assertFalse(crashFile.exists(), "a delivered crash was kept")
        next.send(Message.Resume(1))
        next.send(Message.Pause(2))
        assertTrue(next.expect<Message.State>().exceptions.isEmpty(), "the crash was delivered twice")
        next.send(Message.Resume(2))
    }

    @Test
    fun `an uncaught exception on a thread that is not the app's is no crash of the app`() {
        val host = host()
        agent()
        val side = host.accept().also { it.expect<Message.Hello>() }
        val elsewhere = Recording("another part of the JVM")
        Thread(elsewhere) { throw IllegalStateException("not the app's") }.apply { start(); join() }
        assertEquals("not the app's", elsewhere.uncaught.poll(10, TimeUnit.SECONDS)?.message)
        // A GOODBYE would have been sent from the dying thread, before join returned: the next frame tells.
        side.send(Message.Pause(1))
        val state = side.expect<Message.State>()
        assertTrue(state.exceptions.isEmpty(), "${state.exceptions}")
        side.send(Message.Resume(1))
    }

    @Test
    fun `stopping the main loop and the SDK during a pause throws nothing on their threads`() {
        val process = Recording("process")
        val loop = MainLoop("held", parent = process)
        val host = host()
        val agent = Agent(clock = { 0 })
        val options = AgentOptions(UnixSocketTransport(socket), loop, "app.test", "jvm", crashes = loop.threads)
        // Started from a thread of the group, so the SDK's own thread is in it too.
        Thread(process) { agent.start(options) }.apply { start(); join() }
        agents += agent
        val sdkThread = process.threads().single { it.name == "uatu-agent" }
        val side = host.accept().also { it.expect<Message.Hello>() }
        side.send(Message.Pause(1))
        side.expect<Message.State>()
        assertEquals(1L, awaitPaused(agent))

        loop.close() // interrupts the main thread in its hold
        assertFalse(loop.thread.isAlive, "the main loop did not end")
        agent.stop() // interrupts the SDK's thread
        sdkThread.join(10_000)
        assertFalse(sdkThread.isAlive, "the SDK's thread did not end")
        val escaped = process.uncaught.toList()
        assertTrue(escaped.isEmpty(), "exceptions escaped the SDK's and the main loop's threads: $escaped")
    }

    private fun awaitPaused(agent: Agent): Long? {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (agent.pausedId == null && System.nanoTime() < deadline) Thread.sleep(5)
        return agent.pausedId
    }

    private fun ThreadGroup.threads(): List<Thread> {
        val threads = arrayOfNulls<Thread>(activeCount() + 8)
        return threads.copyOf(enumerate(threads)).filterNotNull()
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
