package dev.uatu.sidecar.android

import dev.uatu.sidecar.DriverException
import dev.uatu.sidecar.adb.Adb
import dev.uatu.sidecar.adb.ShellResult
import uatu.driver.v1.DriverOuterClass.HierarchyResponse
import uatu.driver.v1.DriverOuterClass.Key
import uatu.driver.v1.DriverOuterClass.LogEntry
import uatu.driver.v1.DriverOuterClass.LogLevel
import uatu.driver.v1.DriverOuterClass.Node
import java.io.IOException
import java.util.concurrent.ExecutionException
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/** The outcome of an input: driver.proto's InputResponse without the time. */
data class InputOutcome(val delivered: Boolean, val detail: String = "")

data class IdleOutcome(val idle: Boolean, val dumps: Int, val waitedMs: Long, val detail: String)

data class Screenshot(val png: ByteArray, val width: Int, val height: Int)

data class Hierarchy(val dump: UiDump, val root: Node, val screenWidth: Int, val screenHeight: Int) {
    fun toProto(): HierarchyResponse = HierarchyResponse.newBuilder()
        .setRoot(root).setScreenWidth(screenWidth).setScreenHeight(screenHeight).build()
}

/** How the app's SDK reaches the host: the device socket forwarded to the host's agent port, and the run's token. */
data class AgentForward(val hostPort: Int, val token: String?, val deviceSocket: String = DEFAULT_SOCKET) {
    companion object {
        /** The abstract socket the SDK connects to on the device. */
        const val DEFAULT_SOCKET = "localabstract:uatu-agent"
        /**
         * Intent extras the SDK reads at start (proto/agent.md §1a): the run token, and the
         * socket name (without `localabstract:`) when it is not the default `uatu-agent`.
         */
        const val EXTRA_TOKEN = "uatu.token"
        const val EXTRA_SOCKET = "uatu.socket"
    }
}

data class DriverSettings(
    /** The longest one device command may take before the call fails with DEADLINE_EXCEEDED. */
    val commandTimeoutMs: Long = 20_000,
    /** How often `uiautomator dump` is asked again when the screen was busy. */
    val dumpAttempts: Int = 5,
    val dumpRetryDelayMs: Long = 150,
    /** No new attempt starts after this long, so Hierarchy answers within the host's 5 s deadline. */
    val dumpBudgetMs: Long = 4_000,
    /** The least time between two dumps when waiting for idle (a real dump takes longer by itself). */
    val idlePollMs: Long = 50,
    val agent: AgentForward? = null,
)

/**
 * Every RPC of driver.proto, done on an Android device through the narrow
 * [Adb] boundary. Thread-safe: gRPC calls run on several threads, and calls
 * that touch the device are serialised (the device does one thing at a time anyway).
 *
 * The device is connected lazily by `connect` and again after it was lost, so
 * a sidecar started before the device is attached, or across a USB hiccup,
 * keeps working; until then every call fails with the connection's actionable error.
 */
class AndroidDriver(
    private val connect: () -> Adb,
    private val settings: DriverSettings = DriverSettings(),
) : AutoCloseable {
    private val lock = Any()
    private var session: Session? = null
    private val commands = Executors.newCachedThreadPool { runnable ->
        Thread(runnable, "adb-command").apply { isDaemon = true }
    }

    /** The app the host launched last: logs and metrics are that app's. */
    @Volatile
    private var appPackage: String? = null

    private inner class Session(val adb: Adb) {
        val bootOffsetMs: Long
        val connectedAtNanos = System.nanoTime()
        val screen: Pair<Int, Int>
        var dumpForm: DumpForm? = null

        /** The last dump read and its hierarchy: the same XML again (a still screen) is not parsed again. */
        var lastDump: Pair<String, Hierarchy>? = null

        init {
            bootOffsetMs = DeviceOutput.uptimeMs(run(adb, "cat /proc/uptime").stdout)
                ?: throw DriverException.deviceError("reading /proc/uptime", adb.serial, "no uptime in the answer")
            val size = run(adb, "wm size")
            screen = DeviceOutput.screenSize(size.stdout)
                ?: throw DriverException.deviceError("wm size", adb.serial, "no screen size in `${size.allOutput}`")
            settings.agent?.let { agent ->
                try {
                    adb.reverseForward(agent.deviceSocket, agent.hostPort)
                } catch (e: IOException) {
                    throw DriverException.reverseForwardFailed(adb.serial, agent.deviceSocket, agent.hostPort, e)
                }
            }
        }

        /** The device's monotonic clock: its uptime when connected plus the time since. */
        fun nowMs(): Long = bootOffsetMs + (System.nanoTime() - connectedAtNanos) / 1_000_000
    }

    /** How `uiautomator dump` is asked for its XML; the first that works on a device is kept. */
    enum class DumpForm(val command: String) {
        TTY("uiautomator dump /dev/tty"),
        STDOUT("uiautomator dump /dev/stdout"),
        FILE("uiautomator dump $DUMP_FILE && cat $DUMP_FILE"),
    }

    val serial: String? get() = synchronized(lock) { session?.adb?.serial }

    private fun session(): Session = synchronized(lock) {
        session ?: run {
            val adb = try {
                connect()
            } catch (e: IOException) {
                throw DriverException.connectionFailed(e)
            }
            try {
                Session(adb).also { session = it }
            } catch (e: IOException) {
                adb.close()
                throw DriverException.deviceLost("connecting", adb.serial, e)
            } catch (e: Exception) {
                adb.close()
                throw e
            }
        }
    }

    /** Runs `block` on the device session; a lost device is dropped so the next call reconnects. */
    private fun <T> withDevice(what: String, block: Session.() -> T): T = synchronized(lock) {
        val current = session()
        try {
            current.block()
        } catch (e: IOException) {
            dropSession()
            throw DriverException.deviceLost(what, current.adb.serial, e)
        }
    }

    private fun dropSession() {
        session?.adb?.close()
        session = null
    }

    /** One shell command with the command timeout; a hung device fails the call instead of the sidecar. */
    private fun run(adb: Adb, command: String, timeoutMs: Long = settings.commandTimeoutMs): ShellResult =
        withTimeout(adb.serial, command, timeoutMs) { adb.shell(command) }

    private fun <T> withTimeout(serial: String, what: String, timeoutMs: Long, block: () -> T): T {
        val future = commands.submit<T> { block() }
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS)
        } catch (e: TimeoutException) {
            future.cancel(true)
            throw DriverException.timeout("`$what`", serial, timeoutMs)
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        } catch (e: InterruptedException) {
            future.cancel(true)
            Thread.currentThread().interrupt()
            throw DriverException.timeout("`$what` (interrupted)", serial, timeoutMs)
        }
    }

    private fun Session.shell(command: String, timeoutMs: Long = settings.commandTimeoutMs) = run(adb, command, timeoutMs)

    /** A command that must succeed; its output otherwise names the failure. */
    private fun Session.mustShell(command: String, timeoutMs: Long = settings.commandTimeoutMs): ShellResult {
        val result = shell(command, timeoutMs)
        if (!result.ok) throw DriverException.deviceError("`$command`", adb.serial, "exit ${result.exitCode}: ${result.allOutput.take(500)}")
        return result
    }

    fun deviceTimeMs(): Long = withDevice("reading the device clock") { nowMs() }

    // --- app lifecycle -------------------------------------------------------

    fun launch(bundleId: String, clearState: Boolean, launcherActivity: String?): Long = withDevice("Launch $bundleId") {
        requirePackageName(bundleId)
        requireInstalled(bundleId)
        if (clearState) {
            val cleared = shell("pm clear $bundleId")
            if (!cleared.stdout.contains("Success")) {
                throw DriverException.deviceError("`pm clear $bundleId`", adb.serial, cleared.allOutput.ifEmpty { "exit ${cleared.exitCode}" })
            }
        } else {
            mustShell("am force-stop $bundleId")
        }
        val component = when {
            launcherActivity.isNullOrBlank() -> launcherActivityOf(bundleId)
            launcherActivity.contains('/') -> launcherActivity
            else -> "$bundleId/$launcherActivity"
        }
        val extras = settings.agent?.let { agent ->
            val token = agent.token?.let { " --es ${AgentForward.EXTRA_TOKEN} ${InputText.shellQuote(it)}" } ?: ""
            val socket = agent.deviceSocket.takeIf { it != AgentForward.DEFAULT_SOCKET }
                ?.let { " --es ${AgentForward.EXTRA_SOCKET} ${InputText.shellQuote(it.removePrefix("localabstract:"))}" } ?: ""
            token + socket
        } ?: ""
        // Without -W: the host's Launch deadline is short, and it waits for the screen (WaitForIdle) and the SDK anyway.
        val started = shell("am start -n ${InputText.shellQuote(component)}$extras")
        // `am start` exits 0 on some Android versions even when it failed; its output says.
        val error = started.allOutput.lines().firstOrNull { it.startsWith("Error") || it.contains("Exception") }
        if (!started.ok || error != null) {
            throw DriverException.deviceError("starting $component", adb.serial, error ?: started.allOutput.take(500))
        }
        appPackage = bundleId
        nowMs()
    }

    fun terminate(bundleId: String) = withDevice("Terminate $bundleId") {
        requirePackageName(bundleId)
        requireInstalled(bundleId)
        mustShell("am force-stop $bundleId")
        Unit
    }

    private fun Session.requireInstalled(bundleId: String) {
        val path = shell("pm path $bundleId")
        if (!path.ok || !path.stdout.contains("package:")) throw DriverException.appNotInstalled(bundleId, adb.serial)
    }

    private fun Session.launcherActivityOf(bundleId: String): String {
        val resolved = shell("cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER $bundleId")
        return DeviceOutput.resolvedActivity(resolved.stdout) ?: throw DriverException(
            io.grpc.Status.Code.FAILED_PRECONDITION,
            "app $bundleId has no launcher activity on ${adb.serial} (`cmd package resolve-activity` found none): " +
                "name the activity to start (launcher_activity, e.g. `.MainActivity`)",
        )
    }

    private fun requirePackageName(bundleId: String) {
        // Package names go into shell commands: only what Android allows in them.
        if (!Regex("[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*").matches(bundleId)) {
            throw DriverException.invalidArgument("`$bundleId` is not an Android package name")
        }
    }

    // --- input ---------------------------------------------------------------

    fun tap(x: Int, y: Int): InputOutcome = withDevice("Tap") {
        offScreen(x, y)?.let { return@withDevice InputOutcome(false, it) }
        mustShell("input tap $x $y")
        InputOutcome(true)
    }

    sealed interface Selector {
        data class ResourceId(val id: String) : Selector
        data class Text(val text: String) : Selector
        data class ContentDescription(val description: String) : Selector
    }

    fun tapSelector(selector: Selector): InputOutcome = withDevice("TapSelector") {
        val hierarchy = hierarchy(this)
        val element = hierarchy.dump.windows.asSequence().flatMap { it.descendantsAndSelf() }.firstOrNull { matches(it, selector) }
            ?: return@withDevice InputOutcome(false, "no element matches ${describe(selector)}")
        val bounds = element.bounds
        if (bounds == null || bounds.isEmpty) {
            return@withDevice InputOutcome(false, "the element matching ${describe(selector)} has no area on screen")
        }
        offScreen(bounds.centreX, bounds.centreY)?.let {
            return@withDevice InputOutcome(
                false,
                "the element matching ${describe(selector)} is off screen (bounds [${bounds.left},${bounds.top}][${bounds.right},${bounds.bottom}]): scroll it into view first",
            )
        }
        mustShell("input tap ${bounds.centreX} ${bounds.centreY}")
        InputOutcome(true)
    }

    private fun matches(element: UiElement, selector: Selector) = when (selector) {
        // A bare id ("submit") also matches the app's qualified one ("app.folio:id/submit").
        is Selector.ResourceId -> element.resourceId == selector.id ||
            (!selector.id.contains(':') && element.resourceId.endsWith(":id/${selector.id}"))
        is Selector.Text -> element.text == selector.text
        is Selector.ContentDescription -> element.contentDescription == selector.description
    }

    private fun describe(selector: Selector) = when (selector) {
        is Selector.ResourceId -> "resource id `${selector.id}`"
        is Selector.Text -> "text `${selector.text}`"
        is Selector.ContentDescription -> "content description `${selector.description}`"
    }

    fun inputText(text: String): InputOutcome = withDevice("InputText") {
        when (val plan = InputText.plan(text)) {
            is InputText.Plan.Commands -> {
                if (plan.commands.isNotEmpty()) mustShell(plan.shellCommand)
                InputOutcome(true)
            }
            is InputText.Plan.NeedsKeyboard -> {
                val ime = shell("settings get secure default_input_method").stdout.trim()
                if (ime == InputText.ADB_KEYBOARD_IME) {
                    mustShell(InputText.adbKeyboardCommand(text))
                    InputOutcome(true)
                } else {
                    val shown = plan.untypeable.take(5).joinToString(" ") { "'$it' (U+%04X)".format(it.code) }
                    InputOutcome(
                        false,
                        "`input text` cannot type $shown: install the ADB Keyboard IME ($ADB_KEYBOARD_APP) and make it " +
                            "the current input method, or type such text through the app",
                    )
                }
            }
        }
    }

    fun swipe(fromX: Int, fromY: Int, toX: Int, toY: Int, durationMs: Int): InputOutcome = withDevice("Swipe") {
        offScreen(fromX, fromY)?.let { return@withDevice InputOutcome(false, "the swipe starts off screen: $it") }
        mustShell("input swipe $fromX $fromY $toX $toY $durationMs", settings.commandTimeoutMs + durationMs)
        InputOutcome(true)
    }

    fun pressKey(key: Key): InputOutcome = withDevice("PressKey") {
        val code = when (key) {
            Key.KEY_BACK -> 4
            Key.KEY_HOME -> 3
            Key.KEY_ENTER -> InputText.KEYCODE_ENTER
            Key.KEY_TAB -> InputText.KEYCODE_TAB
            Key.KEY_UP -> 19
            Key.KEY_DOWN -> 20
            Key.KEY_LEFT -> 21
            Key.KEY_RIGHT -> 22
            else -> throw DriverException.invalidArgument("PressKey needs a key (got $key)")
        }
        mustShell("input keyevent $code")
        InputOutcome(true)
    }

    /** Lets time pass on the device (a real device just runs on). */
    fun sleep(durationMs: Long): Long {
        Thread.sleep(durationMs)
        return deviceTimeMs()
    }

    private fun Session.offScreen(x: Int, y: Int): String? {
        val (width, height) = screen
        return if (x in 0 until width && y in 0 until height) null else "point ($x, $y) is off the ${width}x$height screen"
    }

    // --- capture -------------------------------------------------------------

    fun screenshot(): Screenshot = withDevice("Screenshot") {
        val png = withTimeout(adb.serial, "screencap -p", settings.commandTimeoutMs) { adb.execOut("screencap -p") }
        val (width, height) = DeviceOutput.pngSize(png) ?: throw DriverException.deviceError(
            "`screencap -p`", adb.serial,
            "answered ${png.size} bytes that are not a PNG image: ${String(png.copyOf(minOf(png.size, 120))).trim()}",
        )
        Screenshot(png, width, height)
    }

    fun hierarchy(): Hierarchy = withDevice("Hierarchy") { hierarchy(this) }

    /** One `uiautomator dump`, read: the screen's hierarchy, or why there is none. */
    private sealed interface Capture {
        data class Screen(val hierarchy: Hierarchy) : Capture
        data class Busy(val reason: String) : Capture
        data class Failed(val reason: String) : Capture
    }

    private fun hierarchy(session: Session): Hierarchy {
        val started = System.nanoTime()
        var lastBusy = ""
        var attempts = 0
        while (true) {
            attempts++
            when (val capture = session.capture()) {
                is Capture.Screen -> return capture.hierarchy
                is Capture.Busy -> lastBusy = capture.reason
                is Capture.Failed -> throw DriverException.deviceError("`uiautomator dump`", session.adb.serial, capture.reason)
            }
            val elapsedMs = (System.nanoTime() - started) / 1_000_000
            if (attempts >= settings.dumpAttempts || elapsedMs + settings.dumpRetryDelayMs >= settings.dumpBudgetMs) break
            Thread.sleep(settings.dumpRetryDelayMs)
        }
        throw DriverException(
            io.grpc.Status.Code.UNAVAILABLE,
            "`uiautomator dump` on ${session.adb.serial} gave no screen in $attempts attempts " +
                "(last answer: $lastBusy): the screen kept animating; wait for idle and ask again",
        )
    }

    private fun Session.capture(): Capture {
        val output = dumpOutput()
        val xml = UiAutomatorDump.extractXml(output)
        lastDump?.let { (lastXml, hierarchy) -> if (xml == lastXml) return Capture.Screen(hierarchy) }
        return when (val answer = UiAutomatorDump.readAnswer(output)) {
            is UiAutomatorDump.Answer.Screen -> {
                val hierarchy = hierarchyOf(answer.dump)
                lastDump = checkNotNull(xml) to hierarchy
                Capture.Screen(hierarchy)
            }
            is UiAutomatorDump.Answer.Busy -> Capture.Busy(answer.reason)
            is UiAutomatorDump.Answer.Failed -> Capture.Failed(answer.reason)
        }
    }

    private fun Session.hierarchyOf(dump: UiDump): Hierarchy {
        val (width, height) = if (dump.rotation % 2 == 1) screen.second to screen.first else screen
        return Hierarchy(dump, dump.rootProto(Rect(0, 0, width, height)), width, height)
    }

    /** What one dump printed, in the form known to work on this device, or the first form that works. */
    private fun Session.dumpOutput(): String {
        dumpForm?.let { return shell(it.command).allOutput }
        var failure = ""
        for (form in DumpForm.entries) {
            val output = shell(form.command).allOutput
            when (UiAutomatorDump.readAnswer(output)) {
                // Only a screen proves the form works; a busy answer says nothing about it yet.
                is UiAutomatorDump.Answer.Screen -> return output.also { dumpForm = form }
                is UiAutomatorDump.Answer.Busy -> return output
                is UiAutomatorDump.Answer.Failed -> failure = output
            }
        }
        return failure
    }

    fun recentLogs(sinceMs: Long, minLevel: LogLevel): List<LogEntry> = withDevice("RecentLogs") {
        val pid = appPid() ?: return@withDevice emptyList()
        Logcat.parse(mustShell(Logcat.command(pid, minLevel)).stdout, sinceMs, minLevel)
    }

    /** CPU percent and resident bytes of the app; zero when it is not running. */
    fun metrics(): Pair<Double, Long> = withDevice("Metrics") {
        val pid = appPid() ?: return@withDevice 0.0 to 0L
        val top = shell("top -b -n 1 -p $pid -o PID,%CPU,RES")
        DeviceOutput.topMetrics(top.stdout, pid)
            ?: throw DriverException.deviceError("`top -p $pid`", adb.serial, "no metrics for pid $pid in `${top.allOutput.take(300)}`")
    }

    private fun Session.appPid(): Int? {
        val app = appPackage ?: return null
        return DeviceOutput.pid(shell("pidof $app").stdout)
    }

    data class HealthReport(val ready: Boolean, val detail: String)

    fun health(): HealthReport = withDevice("Health") {
        val booted = shell("getprop sys.boot_completed").stdout.trim() == "1"
        val sdk = shell("getprop ro.build.version.sdk").stdout.trim()
        HealthReport(booted, "${adb.serial}, Android SDK $sdk${if (booted) "" else ", still booting"}")
    }

    // --- idle ----------------------------------------------------------------

    /**
     * Waits until the screen stops changing, the way Maestro decides it: two
     * consecutive hierarchy dumps are equal. Gives up at `timeoutMs` (a dump
     * under way then is finished first) and says what it saw; never waits forever.
     */
    fun waitForIdle(timeoutMs: Long): IdleOutcome = withDevice("WaitForIdle") {
        val started = System.nanoTime()
        fun elapsedMs() = (System.nanoTime() - started) / 1_000_000
        var previous: Node? = null
        var dumps = 0
        var busyAnswers = 0
        var idle = false
        while (!idle) {
            val pollStarted = System.nanoTime()
            val current = when (val capture = capture()) {
                is Capture.Screen -> capture.hierarchy.root
                is Capture.Busy -> null.also { busyAnswers++ }
                is Capture.Failed -> throw DriverException.deviceError("`uiautomator dump`", adb.serial, capture.reason)
            }
            dumps++
            idle = current != null && current == previous
            previous = current
            if (!idle && elapsedMs() >= timeoutMs) {
                return@withDevice IdleOutcome(
                    false, dumps, elapsedMs(),
                    "the screen still changed after $timeoutMs ms ($dumps dumps, $busyAnswers busy answers)",
                )
            }
            val pause = minOf(settings.idlePollMs - (System.nanoTime() - pollStarted) / 1_000_000, timeoutMs - elapsedMs())
            if (!idle && pause > 0) Thread.sleep(pause)
        }
        IdleOutcome(true, dumps, elapsedMs(), "two consecutive dumps were equal after $dumps dumps")
    }

    /** Removes the reverse forward and lets go of the device. */
    override fun close() {
        synchronized(lock) {
            session?.let { current ->
                settings.agent?.let { runCatching { current.adb.removeReverseForward(it.deviceSocket) } }
            }
            dropSession()
        }
        commands.shutdownNow()
    }

    companion object {
        const val DUMP_FILE = "/data/local/tmp/uatu-window-dump.xml"
        const val ADB_KEYBOARD_APP = "the `com.android.adbkeyboard` app"
        const val ADB_KEYBOARD_IME = InputText.ADB_KEYBOARD_IME
    }
}
