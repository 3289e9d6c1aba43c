package dev.uatu.sidecar.adb

import dev.uatu.sdk.core.Agent
import dev.uatu.sdk.core.AgentOptions
import dev.uatu.sdk.core.AppThreads
import dev.uatu.sdk.core.Bounds
import dev.uatu.sdk.core.Hierarchy
import dev.uatu.sdk.core.HierarchySource
import dev.uatu.sdk.core.Node
import dev.uatu.sdk.core.SafePoint
import dev.uatu.sdk.core.Transport
import dev.uatu.sidecar.android.UiAutomatorDump
import dev.uatu.sidecar.android.UiElement
import java.io.IOException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * The app of the fake device with uatu's SDK linked in: the real platform-free core
 * of `sdk-android` (`dev.uatu.sdk.core`), started as the SDK's Android glue starts
 * it, only when the launch intent carries the run token, and connecting as an app
 * on a device does, to the abstract socket the sidecar reverse-forwards (on this
 * fake device: the forward's host port on 127.0.0.1, looked up at each attempt, so
 * an app started before the forward keeps retrying as a real one would).
 *
 * What it reports: the snapshots `screen` (the name of the screen shown) and
 * `launches` (how many times this process's app was started), and, when the host
 * asks for it, the hierarchy of its own window: the shown screen's nodes of this
 * app's package under a root standing for the screen, marked with [HIERARCHY_MARK]
 * as its content description, so a test can tell it from the sidecar's dump.
 */
class FakeApp private constructor(
    private val packageName: String,
    private val device: ScriptedDevice,
    private val launches: Int,
) : AutoCloseable {
    private val agent = Agent()

    /**
     * The app's process: it ends quietly on a crash (the device logs `FATAL EXCEPTION`
     * in its crash buffer, as Android's runtime does), and the moment it ends is awaited.
     */
    private val process = object : ThreadGroup("fake-app process $packageName") {
        override fun uncaughtException(thread: Thread, error: Throwable) {
            died.countDown()
        }
    }
    private val died = CountDownLatch(1)

    /** The app's threads: its main thread. The sidecar's own threads are not the app's, so never its crash. */
    private val threads = AppThreads("fake-app $packageName", process)
    private val mainThread: ExecutorService = Executors.newSingleThreadExecutor { task ->
        threads.newThread("fake-app-main", task).apply { isDaemon = true }
    }

    /** Held while the main thread is blocked (an ANR) or the process is frozen (in the background). */
    @Volatile
    private var blocked: CountDownLatch? = null

    private fun start(token: String, socket: String) {
        agent.extract("screen") { device.shownScreen().first }
        agent.extract("launches") { launches }
        agent.start(
            AgentOptions(
                transport = forwardedSocket(socket),
                safePoint = SafePoint { mainThread.execute(it) },
                appId = packageName,
                platform = "android",
                token = token,
                crashes = threads,
                hierarchy = HierarchySource(::ownWindow),
            ),
        )
    }

    /** The device's abstract socket `socket`, reaching the host through the reverse forward in place. */
    private fun forwardedSocket(socket: String) = Transport {
        val port = device.reverseForwards["localabstract:$socket"]
            ?: throw IOException("connection refused: nothing listens on @$socket (no reverse forward)")
        device.reverseConnector.connect(port)
    }

    private fun ownWindow(): Hierarchy {
        val (_, xml) = device.shownScreen()
        val dump = xml?.let(UiAutomatorDump::extractXml)?.let(UiAutomatorDump::parse)
        val windows = dump?.windows.orEmpty().filter { it.packageName == packageName }.map(::node)
        val (width, height) = device.screenPixels()
        val root = Node(
            contentDescription = HIERARCHY_MARK,
            packageName = packageName,
            enabled = true,
            bounds = Bounds(0, 0, width, height),
            children = windows,
        )
        return Hierarchy(root, width, height)
    }

    private fun node(element: UiElement): Node {
        val bounds = element.bounds
        return Node(
            resourceId = element.resourceId,
            text = element.text,
            contentDescription = element.contentDescription,
            className = element.className,
            packageName = element.packageName,
            clickable = element.clickable,
            enabled = element.enabled,
            checked = element.checked,
            focused = element.focused,
            selected = element.selected,
            scrollable = element.scrollable,
            bounds = bounds?.let { Bounds(it.left, it.top, it.right, it.bottom) } ?: Bounds(0, 0, 0, 0),
            children = element.children.map(::node),
            attributes = element.attributes(),
        )
    }

    /**
     * The main thread stops running tasks until [unblock]: what the SDK sees of an
     * ANR (its main thread stuck) and of a frozen process (nothing runs at all):
     * PAUSEs go unanswered.
     */
    fun block() {
        if (blocked != null) return
        val latch = CountDownLatch(1).also { blocked = it }
        mainThread.execute {
            try {
                latch.await()
            } catch (e: InterruptedException) {
                // the process ends
            }
        }
    }

    fun unblock() {
        blocked?.countDown()
        blocked = null
    }

    /**
     * An `IllegalStateException(message)` uncaught on the main thread, once it runs:
     * the SDK reports it (GOODBYE `crash: …`) and the process dies. Waits a moment
     * for the report.
     */
    fun crash(message: String) {
        unblock()
        mainThread.execute { throw IllegalStateException(message) }
        died.await(CRASH_WAIT_SECONDS, TimeUnit.SECONDS)
    }

    /** The process ends (force-stop, clear-data, a crash, the device going away). */
    override fun close() {
        agent.stop("the app process was stopped")
        blocked?.countDown()
        mainThread.shutdownNow()
    }

    companion object {
        private const val CRASH_WAIT_SECONDS = 5L

        /** The content description of the root of the fake app's own hierarchy. */
        const val HIERARCHY_MARK = "uatu fake app: in-app hierarchy"

        /** Starts `packageName`'s process with the SDK connecting on `socket` with `token`. */
        fun start(packageName: String, device: ScriptedDevice, launches: Int, token: String, socket: String): FakeApp =
            FakeApp(packageName, device, launches).also { it.start(token, socket) }
    }
}
