package dev.uatu.sidecar.android

import dev.uatu.sidecar.DriverException
import dev.uatu.sidecar.DriverService
import dev.uatu.sidecar.adb.Adb
import dev.uatu.sidecar.adb.ShellResult
import io.grpc.Context
import io.grpc.Status
import uatu.driver.v1.DriverOuterClass.AppProcessState
import uatu.driver.v1.DriverOuterClass.HierarchyResponse
import uatu.driver.v1.DriverOuterClass.Key
import uatu.driver.v1.DriverOuterClass.LogEntry
import uatu.driver.v1.DriverOuterClass.LogLevel
import uatu.driver.v1.DriverOuterClass.Node
import uatu.driver.v1.DriverOuterClass.WindowKind
import java.io.IOException
import java.nio.file.Files
import java.nio.file.NoSuchFileException
import java.nio.file.Path
import java.util.concurrent.CancellationException
import java.util.concurrent.ExecutionException
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.locks.ReentrantLock

/** The outcome of an input: driver.proto's InputResponse without the time. */
data class InputOutcome(val delivered: Boolean, val detail: String = "")

data class IdleOutcome(val idle: Boolean, val dumps: Int, val waitedMs: Long, val detail: String)

data class Screenshot(val png: ByteArray, val width: Int, val height: Int)

data class Hierarchy(val dump: UiDump, val root: Node, val screenWidth: Int, val screenHeight: Int) {
    fun toProto(): HierarchyResponse = HierarchyResponse.newBuilder()
        .setRoot(root).setScreenWidth(screenWidth).setScreenHeight(screenHeight).build()
}

/** The focused window and the screen now: driver.proto's FocusResponse without the time. */
data class Focus(
    val packageName: String,
    val title: String,
    val kind: WindowKind,
    val keyboardShown: Boolean,
    val width: Int,
    val height: Int,
    val rotation: Int,
)

/** What `uatu doctor` checks of the installed app: driver.proto's AppInfoResponse. */
data class AppInfo(val debuggable: Boolean, val permissions: Map<String, Boolean>, val grantsPermissions: Boolean)

/** The app's process as the device sees it: driver.proto's AppStatusResponse without the time. */
data class AppStatus(val state: AppProcessState, val pid: Int, val detail: String, val crash: String)

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
    /** The longest one device command may take, when the caller set no shorter deadline. */
    val commandTimeoutMs: Long = 20_000,
    /**
     * The longest one `uiautomator dump` may take: its idle wait gives up after 10 s
     * (`UiAutomation.waitForIdle(1000, 10000)`), then it walks the tree and writes the file.
     */
    val dumpTimeoutMs: Long = 15_000,
    /** How often a dump is asked again when it answered with no screen (busy, no window yet). */
    val dumpAttempts: Int = 5,
    val dumpRetryDelayMs: Long = 150,
    /**
     * How long after WaitForIdle's dump a Hierarchy call without an input in between
     * answers with that dump instead of taking another (the host asks right after).
     */
    val idleDumpReuseMs: Long = 2_000,
    /** Grant the app's requested runtime permissions at each launch (as Maestro does by default). */
    val grantPermissions: Boolean = true,
    /**
     * Whether a launch asked to clear the app's state runs `pm clear` (the host's
     * `--clear-data`); when not, the app is stopped and started on the data it has.
     */
    val clearData: Boolean = true,
    val agent: AgentForward? = null,
)

/**
 * Every RPC of driver.proto, done on an Android device through the narrow
 * [Adb] boundary. Thread-safe: gRPC calls run on several threads, and calls
 * that touch the device are serialised (the device does one thing at a time anyway).
 *
 * Deadlines: a call waits for the device, and for the device to be free of
 * another call, no longer than its caller's gRPC deadline (or the command
 * timeout); when the caller cancels or the deadline passes, the command under
 * way is interrupted, which closes its connection and ends it on the device, so
 * the next call does not queue behind a dump nobody waits for.
 *
 * The device is connected lazily by `connect` and again after it was lost, so
 * a sidecar started before the device is attached, or across a USB hiccup,
 * keeps working; until then every call fails with the connection's actionable error.
 */
class AndroidDriver(
    private val connect: () -> Adb,
    private val settings: DriverSettings = DriverSettings(),
) : AutoCloseable {
    private val lock = ReentrantLock()

    /** What holds the device now, for the message of a call that waited for it in vain. */
    @Volatile
    private var busyWith = ""
    private var session: Session? = null
    private val commands = Executors.newCachedThreadPool { runnable ->
        Thread(runnable, "adb-command").apply { isDaemon = true }
    }

    /** The app the host launched last, and when: logs, metrics and status are that app's since then. */
    @Volatile
    private var appPackage: String? = null

    @Volatile
    private var launchedAtMs = 0L

    private inner class Session(val adb: Adb) {
        val bootOffsetMs: Long
        val connectedAtNanos = System.nanoTime()
        val physicalScreen: Pair<Int, Int>

        /** The screen as last seen (a dump's rotation, the window manager's size): rotated when the device is. */
        @Volatile
        var screen: Pair<Int, Int>

        /** The last dump read and its hierarchy: the same XML again (a still screen) is not parsed again. */
        var lastDump: Pair<String, Hierarchy>? = null

        /** WaitForIdle's dump and when it was taken, until the next input. */
        var idleDump: Pair<Hierarchy, Long>? = null

        val logs: LogFollower

        init {
            bootOffsetMs = DeviceOutput.uptimeMs(run(adb, "cat /proc/uptime").stdout)
                ?: throw DriverException.deviceError("reading /proc/uptime", adb.serial, "no uptime in the answer")
            val size = run(adb, "wm size")
            physicalScreen = DeviceOutput.screenSize(size.stdout)
                ?: throw DriverException.deviceError("wm size", adb.serial, "no screen size in `${size.allOutput}`")
            screen = physicalScreen
            settings.agent?.let { agent ->
                try {
                    adb.reverseForward(agent.deviceSocket, agent.hostPort)
                } catch (e: IOException) {
                    throw DriverException.reverseForwardFailed(adb.serial, agent.deviceSocket, agent.hostPort, e)
                }
            }
            logs = LogFollower(adb.shellStream(Logcat.FOLLOW))
        }

        /** The device's monotonic clock: its uptime when connected plus the time since. */
        fun nowMs(): Long = bootOffsetMs + (System.nanoTime() - connectedAtNanos) / 1_000_000

        /** The screen for a rotation: the physical one, turned a quarter for 1 and 3. */
        fun screenFor(rotation: Int): Pair<Int, Int> =
            if (rotation % 2 == 1) physicalScreen.second to physicalScreen.first else physicalScreen

        fun close() {
            logs.close()
            adb.close()
        }
    }

    val serial: String? get() = session?.adb?.serial

    private fun session(): Session = session ?: run {
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

    /**
     * Runs `block` on the device session once the device is free (waiting no longer
     * than the call may); a lost device is dropped so the next call reconnects.
     */
    private fun <T> withDevice(what: String, block: Session.() -> T): T {
        val waitMs = remainingMs(settings.commandTimeoutMs)
        if (!lock.tryLock(waitMs.coerceAtLeast(0), TimeUnit.MILLISECONDS)) {
            throw DriverException(
                Status.Code.DEADLINE_EXCEEDED,
                "$what waited $waitMs ms for the device, busy with $busyWith: call again when it is done",
            )
        }
        try {
            busyWith = what
            val current = session()
            try {
                return current.block()
            } catch (e: IOException) {
                dropSession()
                throw DriverException.deviceLost(what, current.adb.serial, e)
            }
        } finally {
            busyWith = ""
            lock.unlock()
        }
    }

    private fun dropSession() {
        session?.close()
        session = null
    }

    /** The time the current call has left: its gRPC deadline's, at most [limitMs]. */
    private fun remainingMs(limitMs: Long): Long {
        val deadline = Context.current().deadline ?: return limitMs
        return minOf(limitMs, deadline.timeRemaining(TimeUnit.MILLISECONDS))
    }

    /** One shell command within the call's time; a hung device fails the call instead of the sidecar. */
    private fun run(adb: Adb, command: String, timeoutMs: Long = settings.commandTimeoutMs): ShellResult =
        withTimeout(adb.serial, command, timeoutMs) { adb.shell(command) }

    /**
     * Runs [block] on a thread of its own and waits for it at most [timeoutMs] (less
     * when the caller's deadline is nearer); on timeout, or when the caller cancels,
     * the thread is interrupted, which closes the command's connection.
     */
    private fun <T> withTimeout(serial: String, what: String, timeoutMs: Long, block: () -> T): T {
        val context = Context.current()
        if (context.isCancelled) throw cancelled(what)
        val budgetMs = remainingMs(timeoutMs)
        if (budgetMs <= 0) throw DriverException.timeout("`$what`", serial, 0)
        val future = commands.submit<T> { block() }
        val onCancel = Context.CancellationListener { future.cancel(true) }
        context.addListener(onCancel, Runnable::run)
        try {
            return future.get(budgetMs, TimeUnit.MILLISECONDS)
        } catch (e: TimeoutException) {
            future.cancel(true)
            throw DriverException.timeout("`$what`", serial, budgetMs)
        } catch (e: CancellationException) {
            throw cancelled(what)
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        } catch (e: InterruptedException) {
            future.cancel(true)
            Thread.currentThread().interrupt()
            throw DriverException.timeout("`$what` (interrupted)", serial, budgetMs)
        } finally {
            context.removeListener(onCancel)
        }
    }

    private fun cancelled(what: String) = DriverException(Status.Code.CANCELLED, "`$what` was abandoned: the caller cancelled the call")

    private fun Session.shell(command: String, timeoutMs: Long = settings.commandTimeoutMs) = run(adb, command, timeoutMs)

    /** A command that must succeed; its output otherwise names the failure. */
    private fun Session.mustShell(command: String, timeoutMs: Long = settings.commandTimeoutMs): ShellResult {
        val result = shell(command, timeoutMs)
        if (!result.ok) throw DriverException.deviceError("`$command`", adb.serial, "exit ${result.exitCode}: ${result.allOutput.take(500)}")
        return result
    }

    /** The screen changes: a dump taken before it is not the screen any more. */
    private fun Session.changed() {
        idleDump = null
    }

    fun deviceTimeMs(): Long = withDevice("reading the device clock") { nowMs() }

    // --- app lifecycle -------------------------------------------------------

    fun launch(bundleId: String, clearState: Boolean, launcherActivity: String?): Long = withDevice("Launch $bundleId") {
        requirePackageName(bundleId)
        requireInstalled(bundleId)
        changed()
        if (clearState && settings.clearData) {
            val cleared = shell("pm clear $bundleId")
            if (!cleared.stdout.contains("Success")) {
                throw DriverException.deviceError("`pm clear $bundleId`", adb.serial, cleared.allOutput.ifEmpty { "exit ${cleared.exitCode}" })
            }
        } else {
            mustShell("am force-stop $bundleId")
        }
        if (settings.grantPermissions) grantRuntimePermissions(bundleId)
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
        appPackage = bundleId
        launchedAtMs = nowMs()
        // Without -W: the host's Launch deadline is short, and it waits for the screen (WaitForIdle) and the SDK anyway.
        val started = shell("am start -n ${InputText.shellQuote(component)}$extras")
        // `am start` exits 0 on some Android versions even when it failed; its output says.
        val error = started.allOutput.lines().firstOrNull { it.startsWith("Error") || it.contains("Exception") }
        if (!started.ok || error != null) {
            throw DriverException.deviceError("starting $component", adb.serial, error ?: started.allOutput.take(500))
        }
        nowMs()
    }

    /**
     * Grants each runtime permission the app requests and does not have, as
     * Maestro does by default: the notification prompt, which comes back after every
     * `pm clear`, and the others would stand between the run and the app. A
     * permission the system refuses to grant (some are not grantable) is logged and
     * left.
     */
    private fun Session.grantRuntimePermissions(bundleId: String) {
        val missing = DeviceOutput.runtimePermissions(shell("dumpsys package $bundleId").stdout).filterValues { !it }.keys
        for (permission in missing) {
            val granted = shell("pm grant $bundleId $permission")
            if (!granted.ok) DriverService.log("could not grant $permission to $bundleId: ${granted.allOutput.lines().lastOrNull { it.isNotBlank() }}")
        }
    }

    /** Whether [bundleId] is a debug build, and its runtime permissions and which are granted. */
    fun appInfo(bundleId: String): AppInfo = withDevice("AppInfo $bundleId") {
        requirePackageName(bundleId)
        requireInstalled(bundleId)
        val dump = shell("dumpsys package $bundleId").stdout
        AppInfo(DeviceOutput.debuggable(dump), DeviceOutput.runtimePermissions(dump), settings.grantPermissions)
    }

    fun terminate(bundleId: String) = withDevice("Terminate $bundleId") {
        requirePackageName(bundleId)
        requireInstalled(bundleId)
        changed()
        mustShell("am force-stop $bundleId")
        Unit
    }

    /** Installs [apkPath] from this machine (`adb install -r`: the app's data is kept). */
    fun install(apkPath: Path): String = withDevice("Install $apkPath") {
        val apk = try {
            Files.readAllBytes(apkPath)
        } catch (e: NoSuchFileException) {
            throw DriverException.invalidArgument("$apkPath does not exist")
        } catch (e: IOException) {
            throw DriverException.invalidArgument("cannot read $apkPath: ${e.message}")
        }
        val remote = "/data/local/tmp/uatu-install.apk"
        withTimeout(adb.serial, "push $apkPath", settings.commandTimeoutMs) { adb.push(apk, remote) }
        val installed = shell("pm install -r $remote")
        shell("rm -f $remote")
        val answer = installed.allOutput.lines().lastOrNull { it.isNotBlank() }.orEmpty()
        if (!installed.ok || !answer.startsWith("Success")) {
            throw DriverException(Status.Code.FAILED_PRECONDITION, "installing $apkPath on ${adb.serial} failed: ${answer.ifEmpty { "exit ${installed.exitCode}" }}")
        }
        answer
    }

    private fun Session.requireInstalled(bundleId: String) {
        val path = shell("pm path $bundleId")
        if (!path.ok || !path.stdout.contains("package:")) throw DriverException.appNotInstalled(bundleId, adb.serial)
    }

    private fun Session.launcherActivityOf(bundleId: String): String {
        val resolved = shell("cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER $bundleId")
        return DeviceOutput.resolvedActivity(resolved.stdout) ?: throw DriverException(
            Status.Code.FAILED_PRECONDITION,
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
        changed()
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
        changed()
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
                changed()
                if (plan.commands.isNotEmpty()) mustShell(plan.shellCommand)
                InputOutcome(true)
            }
            is InputText.Plan.NeedsKeyboard -> {
                val ime = shell("settings get secure default_input_method").stdout.trim()
                if (ime == InputText.ADB_KEYBOARD_IME) {
                    changed()
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
        changed()
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
        changed()
        mustShell("input keyevent $code")
        InputOutcome(true)
    }

    /** Lets time pass on the device (a real device just runs on). */
    fun sleep(durationMs: Long): Long {
        Thread.sleep(durationMs)
        return deviceTimeMs()
    }

    /** Why a point cannot be touched, against the screen as last seen (rotated or not); null when it can. */
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

    /** The screen's hierarchy: WaitForIdle's dump when no input came since, else a new one. */
    fun hierarchy(): Hierarchy = withDevice("Hierarchy") {
        idleDump?.let { (hierarchy, takenAt) ->
            if (System.nanoTime() - takenAt <= TimeUnit.MILLISECONDS.toNanos(settings.idleDumpReuseMs)) return@withDevice hierarchy
        }
        hierarchy(this)
    }

    /** One `uiautomator dump`, read: the screen's hierarchy, or why there is none. */
    private sealed interface Capture {
        data class Screen(val hierarchy: Hierarchy) : Capture
        data class Busy(val reason: String) : Capture
        data class Failed(val reason: String) : Capture
    }

    private fun hierarchy(session: Session): Hierarchy {
        var lastBusy = ""
        var attempts = 0
        while (true) {
            attempts++
            when (val capture = session.capture()) {
                is Capture.Screen -> return capture.hierarchy
                is Capture.Busy -> lastBusy = capture.reason
                is Capture.Failed -> throw DriverException.deviceError("`uiautomator dump`", session.adb.serial, capture.reason)
            }
            // A screen that never settles took 10 s to say so: asking again would not help within a call.
            if (attempts >= settings.dumpAttempts || lastBusy.contains(NEVER_IDLE) || remainingMs(settings.dumpTimeoutMs) < settings.dumpRetryDelayMs) break
            Thread.sleep(settings.dumpRetryDelayMs)
        }
        throw DriverException(
            Status.Code.UNAVAILABLE,
            "`uiautomator dump` on ${session.adb.serial} gave no screen in $attempts attempts " +
                "(last answer: $lastBusy): the screen kept animating; wait for idle and ask again",
        )
    }

    /**
     * One dump of every window (`--windows`; Android 12 and older ignore the flag and
     * dump the active window), to a file removed first: uiautomator exits 0 after an
     * error without writing it, and an old file must not pass for the screen.
     */
    private fun Session.capture(): Capture {
        val result = shell("rm -f $DUMP_FILE && uiautomator dump --windows $DUMP_FILE && cat $DUMP_FILE", settings.dumpTimeoutMs)
        val output = result.stdout + "\n" + result.stderr
        val xml = if (UiAutomatorDump.errorLine(output) == null) UiAutomatorDump.extractXml(output) else null
        lastDump?.let { (lastXml, hierarchy) -> if (xml != null && xml == lastXml) return Capture.Screen(hierarchy) }
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
        val (width, height) = screenFor(dump.rotation).also { screen = it }
        return Hierarchy(dump, dump.rootProto(Rect(0, 0, width, height)), width, height)
    }

    /** The app's log lines after [sinceMs] at [minLevel] or above, from the followed log. */
    fun recentLogs(sinceMs: Long, minLevel: LogLevel): List<LogEntry> = withDevice("RecentLogs") {
        val app = appPackage ?: return@withDevice emptyList()
        val pids = logs.pidsOf(app).ifEmpty { setOfNotNull(appPid()) }
        logs.entries().asSequence().map { it.line }
            .filter { it.pid in pids && it.timeMs > sinceMs && Logcat.atLeast(it.level, minLevel) }
            .map { it.toProto() }.toList()
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

    // --- what is on screen, and the app's process ---------------------------

    /** The focused window and the screen now, for [bundleId]'s point of view. */
    fun focus(bundleId: String): Focus = withDevice("Focus") { focus(bundleId) }

    private fun Session.focus(bundleId: String): Focus {
        val state = DeviceOutput.windowState(shell("dumpsys window displays; dumpsys input_method").stdout)
        val (width, height) = (state.size ?: screenFor(state.rotation)).also { screen = it }
        val title = state.focusedWindow.orEmpty()
        val packageName = when {
            title.startsWith(NOT_RESPONDING_TITLE) -> "android"
            title.contains('/') -> title.substringBefore('/')
            else -> ""
        }
        val kind = when {
            title == "$NOT_RESPONDING_TITLE$bundleId" -> WindowKind.WINDOW_KIND_NOT_RESPONDING
            packageName == bundleId -> WindowKind.WINDOW_KIND_APP
            // An app's popup is a window of its own with no component in its title.
            title.startsWith("PopupWindow") && state.focusedApp?.substringBefore('/') == bundleId -> WindowKind.WINDOW_KIND_APP
            packageName.isEmpty() || packageName in SYSTEM_PACKAGES -> WindowKind.WINDOW_KIND_SYSTEM_DIALOG
            else -> WindowKind.WINDOW_KIND_OTHER_APP
        }
        return Focus(packageName, title, kind, state.keyboardShown, width, height, state.rotation)
    }

    /**
     * Whether [bundleId]'s process is alive, in front, not responding or gone, and
     * its last crash since the launch: what the host asks when a pause goes
     * unanswered, to tell a crash from an ANR from an app that was left.
     */
    fun appStatus(bundleId: String): AppStatus = withDevice("AppStatus") {
        requirePackageName(bundleId)
        val since = if (bundleId == appPackage) launchedAtMs else 0L
        val pid = DeviceOutput.pid(shell("pidof $bundleId").stdout)
        if (pid == null) {
            val crash = logs.lastCrash(bundleId, since).orEmpty()
            return@withDevice AppStatus(
                AppProcessState.APP_PROCESS_STATE_GONE, 0,
                if (crash.isEmpty()) "no process of $bundleId" else crash.lines().take(3).joinToString(" "), crash,
            )
        }
        val focus = focus(bundleId)
        val anr = logs.lastAnr(bundleId, since)
        when {
            focus.kind == WindowKind.WINDOW_KIND_NOT_RESPONDING || anr != null ->
                AppStatus(AppProcessState.APP_PROCESS_STATE_NOT_RESPONDING, pid, anr ?: focus.title, "")
            focus.kind == WindowKind.WINDOW_KIND_OTHER_APP ->
                AppStatus(AppProcessState.APP_PROCESS_STATE_BACKGROUND, pid, "${focus.title} is in front", "")
            else -> AppStatus(AppProcessState.APP_PROCESS_STATE_FOREGROUND, pid, focus.title, "")
        }
    }

    // --- idle ----------------------------------------------------------------

    /**
     * Waits until the screen has settled, as UIAutomator decides it: a dump only
     * succeeds after a second without accessibility events
     * (`UiAutomation.waitForIdle(1000, 10000)`), so the first dump that gives a
     * screen means idle, and that dump is the next Hierarchy call's answer.
     * A screen that never settles makes each dump fail after 10 s: the wait ends
     * not idle at `timeoutMs` (a dump under way then is finished first, or
     * interrupted at the caller's deadline).
     */
    fun waitForIdle(timeoutMs: Long): IdleOutcome = withDevice("WaitForIdle") {
        val started = System.nanoTime()
        fun elapsedMs() = (System.nanoTime() - started) / 1_000_000
        var dumps = 0
        var outcome: IdleOutcome? = null
        while (outcome == null) {
            dumps++
            when (val capture = capture()) {
                is Capture.Screen -> {
                    idleDump = capture.hierarchy to System.nanoTime()
                    outcome = IdleOutcome(true, dumps, elapsedMs(), "a dump succeeded after $dumps attempt(s): the screen was idle for 1 s")
                }
                is Capture.Busy -> if (elapsedMs() >= timeoutMs || capture.reason.contains(NEVER_IDLE)) {
                    outcome = IdleOutcome(
                        false, dumps, elapsedMs(),
                        "the screen did not settle within $timeoutMs ms ($dumps dumps; last answer: ${capture.reason})",
                    )
                } else {
                    Thread.sleep(minOf(settings.dumpRetryDelayMs, (timeoutMs - elapsedMs()).coerceAtLeast(0)))
                }
                is Capture.Failed -> throw DriverException.deviceError("`uiautomator dump`", adb.serial, capture.reason)
            }
        }
        outcome
    }

    /** Removes the reverse forward and lets go of the device. */
    override fun close() {
        lock.lock()
        try {
            session?.let { current ->
                settings.agent?.let { runCatching { current.adb.removeReverseForward(it.deviceSocket) } }
            }
            dropSession()
        } finally {
            lock.unlock()
        }
        commands.shutdownNow()
    }

    companion object {
        const val DUMP_FILE = "/data/local/tmp/uatu-window-dump.xml"
        const val ADB_KEYBOARD_APP = "the `com.android.adbkeyboard` app"
        const val ADB_KEYBOARD_IME = InputText.ADB_KEYBOARD_IME
        private const val NEVER_IDLE = "could not get idle state"
        private const val NOT_RESPONDING_TITLE = "Application Not Responding: "

        /** Whose focused windows are the system's dialogs over an app. */
        private val SYSTEM_PACKAGES = setOf(
            "android", "com.android.systemui", "com.google.android.permissioncontroller", "com.android.permissioncontroller",
        )
    }
}
