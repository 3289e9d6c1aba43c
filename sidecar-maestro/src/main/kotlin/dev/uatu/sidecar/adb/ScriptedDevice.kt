package dev.uatu.sidecar.adb

import dev.uatu.sdk.core.Connection
import dev.uatu.sdk.core.TcpTransport
import java.io.IOException
import java.nio.file.Files
import java.nio.file.Path
import java.util.Properties

/**
 * A fake Android device at the [Adb] boundary, answering shell commands the
 * way a device does (the texts are those real devices print). It stands in for
 * what this machine cannot have: tests drive the real backend against it,
 * `--fake-device` serves it from the real sidecar JAR, and
 * [dev.uatu.sidecar.fakedevice.FakeAdbd] serves it over the ADB transport
 * protocol to a real ADB server.
 *
 * It models one app: installed or not, started by `am start`, with a pid while
 * it runs. The app's screen is a list of UIAutomator dumps: each input moves to
 * the next one and the last one stays. Over it the system can put a permission
 * dialog, the keyboard, an ANR dialog, or the launcher (the app in the
 * background); the screen can rotate; the app can stop responding or crash
 * ([Events]). A shell line is run as a shell runs it: simple commands joined by
 * `;`, `&&` and `||`; `uiautomator dump FILE` writes FILE and `cat` reads it, so
 * an old file is read again unless it was removed. Tests add [on] rules that
 * answer matching command lines first (a sequence of replies, the last
 * repeating): errors, busy dumps, slow answers, changing screens. [latency]
 * makes it take the time a device takes.
 *
 * An app listed in [sdkApps] links uatu's SDK: `am start` with the run token
 * (`--es uatu.token T`, proto/agent.md §1a) starts it as a [FakeApp] (the real
 * SDK core) that connects through the reverse forward; `am force-stop`,
 * `pm clear`, a crash and closing the device stop it.
 */
class ScriptedDevice(
    override val serial: String = "emulator-5554",
    screens: List<String> = emptyList(),
    var screencap: ByteArray = ByteArray(0),
    logcat: String = "",
    var installedPackages: MutableMap<String, String> = mutableMapOf(), // package -> launcher activity
    var screenSize: String = "1080x2424",
    var sdk: Int = 34,
    /** `/proc/uptime`'s first figure when the device was made; it counts on from there. */
    uptime: String = "4837.42 9561.80",
    var appPid: Int = 4242,
    var currentInputMethod: String = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
    /** The installed apps that link uatu's SDK (each started as a [FakeApp] when launched with a run token). */
    var sdkApps: Set<String> = emptySet(),
    /**
     * Test only (the wrong-token case): the app's SDK presents this token instead of the
     * one its launch intent carries, as an app launched by another run would.
     */
    var appTokenOverride: String? = null,
    /** The screens' names, for the app's `screen` snapshot (default `screen-N`). */
    screenNames: List<String> = emptyList(),
    /** How long commands take. */
    var latency: DeviceLatency = DeviceLatency.INSTANT,
    /** The screens (by name) that never settle: their dump waits 10 s and fails, as on a clock or a video. */
    var neverIdleScreens: Set<String> = emptySet(),
    /** The runtime permissions each app requests (`uses-permission` of a dangerous level). */
    var requestedPermissions: Map<String, List<String>> = emptyMap(),
    /** The permission each app asks for when it starts without it (its dialog is then shown over the app). */
    var asksAtStart: Map<String, String> = emptyMap(),
    /** What happens after the Nth input of a run (1-based): see [Events]. */
    var scriptedEvents: Map<Int, List<String>> = emptyMap(),
    /** The package an APK given to `pm install` holds (the fake reads no APK). */
    var installablePackage: String? = null,
    /** Installed apps built for release: their flags lack `DEBUGGABLE` (the others are debug builds). */
    var releaseBuilds: Set<String> = emptySet(),
) : Adb {
    /** A scripted answer. */
    sealed interface Reply {
        val delayMs: Long

        data class Shell(val result: ShellResult, override val delayMs: Long = 0) : Reply
        data class Bytes(val bytes: ByteArray, override val delayMs: Long = 0) : Reply
        /** The connection breaks (the device was unplugged). */
        data class Disconnect(val message: String = "connection reset", override val delayMs: Long = 0) : Reply
    }

    private class Rule(val matches: (String) -> Boolean, val respond: (String) -> Reply)

    /** The state of the app's process when one runs. */
    enum class AppState {
        /** In the foreground, answering. */
        RUNNING,

        /** In the foreground with its main thread blocked: the system reports an ANR and shows its dialog. */
        NOT_RESPONDING,

        /** Left for the launcher: cached and frozen (Android 14's freezer); it answers nothing until it comes back. */
        BACKGROUND,
    }

    private val rules = mutableListOf<Rule>()
    private val log = mutableListOf<String>()
    private val files = mutableMapOf<String, ByteArray>()

    /** Read by the fake app's SDK thread without the device's lock. */
    private val forwards = java.util.concurrent.ConcurrentHashMap<String, Int>()
    private val bootOffsetMs = uptime.trim().substringBefore(' ').toBigDecimal().movePointRight(3).toLong()
    private val madeAtNanos = System.nanoTime()

    /** The device's log buffers. */
    var logs = DeviceLog(logcat, ::uptimeMs)

    // Written under the device's lock; volatile so the fake app's threads read them without it.
    @Volatile
    private var screens: List<String> = screens

    @Volatile
    private var screenNames: List<String> = screenNames

    @Volatile
    private var screenIndex = 0

    /** 0 (portrait) to 3, as `Display.getRotation()`. */
    @Volatile
    var rotation = 0
        private set

    private val overlays = mutableListOf<Overlay>() // bottom to top
    private val granted = mutableMapOf<String, MutableSet<String>>()
    private var runningApp: String? = null
    private var appState = AppState.RUNNING
    private var app: FakeApp? = null
    private var launches = 0
    private var inputs = 0

    @Volatile
    var closed = false
        private set

    /** Every command received (each simple command of a shell line, and exec), in order. */
    val commands: List<String> get() = synchronized(this) { log.toList() }

    /** Reverse forwards in place: device socket -> host port. */
    val reverseForwards: Map<String, Int> get() = forwards.toMap()

    /** Answers command lines containing `fragment` with `replies` in turn (the last one repeats). Earlier rules win. */
    fun on(fragment: String, vararg replies: Reply): ScriptedDevice = on({ it.contains(fragment) }, *replies)

    fun on(matches: (String) -> Boolean, vararg replies: Reply): ScriptedDevice {
        require(replies.isNotEmpty()) { "a rule needs at least one reply" }
        val queue = ArrayDeque(replies.toList())
        return onEvery(matches) { if (queue.size > 1) queue.removeFirst() else queue.first() }
    }

    /** Answers each matching command line with what `respond` makes of it. Earlier rules win. */
    fun onEvery(matches: (String) -> Boolean, respond: (String) -> Reply): ScriptedDevice = synchronized(this) {
        rules += Rule(matches, respond)
        this
    }

    fun setScreens(dumps: List<String>, names: List<String> = emptyList()) = synchronized(this) {
        screens = dumps
        screenNames = names
        screenIndex = 0
    }

    /** The app's screen shown now, by name, and its dump (what the fake app's own window holds). */
    fun shownScreen(): Pair<String, String?> {
        val index = screenIndex
        return (screenNames.getOrNull(index) ?: "screen-$index") to screens.getOrNull(index)?.let(::laidOut)
    }

    /** The screen's size now: `wm size`, swapped when the device is rotated a quarter turn. */
    fun screenPixels(): Pair<Int, Int> {
        val (width, height) = physicalPixels()
        return if (rotation % 2 == 1) height to width else width to height
    }

    private fun physicalPixels(): Pair<Int, Int> {
        val (width, height) = screenSize.split('x').map { it.trim().toIntOrNull() ?: 0 } + listOf(0, 0)
        return width to height
    }

    /** A portrait dump laid out for the current rotation. */
    private fun laidOut(dump: String): String {
        if (rotation % 2 == 0) return dump
        val (width, height) = physicalPixels()
        return DumpXml.landscape(dump, width, height).replaceFirst(Regex("<hierarchy rotation=\"\\d\""), "<hierarchy rotation=\"$rotation\"")
    }

    val currentScreen: String? get() = synchronized(this) { screens.getOrNull(screenIndex) }

    /** The device's monotonic clock: `/proc/uptime` in milliseconds. */
    fun uptimeMs(): Long = bootOffsetMs + (System.nanoTime() - madeAtNanos) / 1_000_000

    override fun shell(command: String): ShellResult = when (val reply = answer(command)) {
        is Reply.Shell -> reply.result
        is Reply.Bytes -> ShellResult(String(reply.bytes, Charsets.UTF_8), "", 0)
        is Reply.Disconnect -> throw IOException(reply.message)
    }

    /** Whether [command] keeps printing until it is stopped (`logcat` without `-d`), so is run by [shellStream]. */
    fun isStreaming(command: String): Boolean {
        val words = command.trim().split(Regex("\\s+"))
        return words.firstOrNull() == "logcat" && DeviceLog.query(words).follow
    }

    override fun shellStream(command: String): ShellStream {
        if (!isStreaming(command)) {
            val output = shell(command).stdout.toByteArray(Charsets.UTF_8)
            return object : ShellStream {
                private var sent = false

                override fun next(): ByteArray? = if (sent) null else output.also { sent = true }

                override fun close() {}
            }
        }
        synchronized(this) {
            check(!closed) { "the fake device $serial was closed" }
            log += command
        }
        return logs.stream(DeviceLog.query(command.trim().split(Regex("\\s+"))))
    }

    override fun execOut(command: String): ByteArray = when (val reply = answer(command)) {
        is Reply.Shell -> reply.result.stdout.toByteArray(Charsets.UTF_8) + reply.result.stderr.toByteArray(Charsets.UTF_8)
        is Reply.Bytes -> reply.bytes
        is Reply.Disconnect -> throw IOException(reply.message)
    }

    /** A rule's reply for the whole line, else the line run command by command. The delay is taken outside the lock. */
    private fun answer(line: String): Reply {
        val reply = synchronized(this) {
            check(!closed) { "the fake device $serial was closed" }
            rules.firstOrNull { it.matches(line) }?.let { rule ->
                log += line
                rule.respond(line)
            } ?: runLine(line)
        }
        if (reply.delayMs > 0) Thread.sleep(reply.delayMs)
        return reply
    }

    override fun push(content: ByteArray, remotePath: String) = synchronized(this) {
        log += "push $remotePath"
        files[remotePath] = content.copyOf()
    }

    override fun pull(remotePath: String): ByteArray = synchronized(this) {
        log += "pull $remotePath"
        files[remotePath]?.copyOf() ?: throw IOException("remote object '$remotePath' does not exist")
    }

    /** The file at [path] on the device, or null (read without logging a command: the sync service's STAT and RECV). */
    fun fileOrNull(path: String): ByteArray? = synchronized(this) { files[path]?.copyOf() }

    /** How a connection the app opens to a reverse-forwarded device socket reaches the host port. */
    fun interface ReverseConnector {
        fun connect(hostPort: Int): Connection
    }

    /**
     * Straight to the host port on 127.0.0.1 by default (the device and the host are one
     * machine); through the ADB server when the device is served by [dev.uatu.sidecar.fakedevice.FakeAdbd].
     */
    @Volatile
    var reverseConnector: ReverseConnector = ReverseConnector { hostPort -> TcpTransport(hostPort).connect() }

    /** When set, `adb reverse` fails with this message (as when adbd refuses it). */
    var reverseRefusal: String? = null

    override fun reverseForward(deviceSocket: String, hostPort: Int) = synchronized(this) {
        log += "reverse:forward:$deviceSocket;tcp:$hostPort"
        reverseRefusal?.let { throw IOException(it) }
        forwards[deviceSocket] = hostPort
    }

    override fun removeReverseForward(deviceSocket: String) = synchronized(this) {
        log += "reverse:killforward:$deviceSocket"
        forwards.remove(deviceSocket)
        Unit
    }

    override fun close() {
        synchronized(this) { stopApp() }
        closed = true
    }

    // --- what happens on the device ------------------------------------------------

    /**
     * Things that happen to the device and its app, as tests and device.properties'
     * `on.input.N=EVENT` name them: `rotate` (a quarter turn, and back), `keyboard`
     * (shown; BACK hides it), `permission` (the app asks for its permission),
     * `anr` (the app's main thread blocks and the system says so), `stall` (the app's
     * main thread blocks, in the seconds before the system notices: no dialog, no
     * `ANR in` line yet), `background` (the launcher comes to the
     * front and the app is frozen), `foreground` (the app comes back), `crash` (an
     * uncaught exception on the app's main thread), `offline` (the device goes away:
     * what its transport does, see [onOffline]).
     */
    object Events {
        val ALL = setOf("rotate", "keyboard", "permission", "anr", "stall", "background", "foreground", "crash", "offline")
    }

    /** What going offline does: set by the transport serving the device ([dev.uatu.sidecar.fakedevice.FakeAdbd]). */
    @Volatile
    var onOffline: (() -> Unit)? = null

    /** Makes [event] happen now. */
    fun happen(event: String) = synchronized(this) {
        when (event) {
            "rotate" -> rotation = if (rotation == 0) 1 else 0
            "keyboard" -> show(Overlay.KEYBOARD)
            "permission" -> runningApp?.let { app -> asksAtStart[app]?.let { askFor(app, it, force = true) } }
            "anr" -> notResponding()
            "stall" -> app?.block()
            "background" -> toBackground()
            "foreground" -> toForeground()
            "crash" -> crash("ledger out of balance")
            "offline" -> onOffline?.invoke() ?: throw IllegalStateException("this fake device is not served over a transport that can go offline")
            else -> throw IllegalArgumentException("unknown device event `$event` (known: ${Events.ALL.joinToString()})")
        }
    }

    private fun show(overlay: Overlay) {
        if (overlay !in overlays) overlays += overlay
    }

    private fun hide(overlay: Overlay) {
        overlays -= overlay
    }

    /** The permission dialog, over the app, unless the permission is granted. */
    private fun askFor(app: String, permission: String, force: Boolean = false) {
        if (force || permission !in granted[app].orEmpty()) show(Overlay.PERMISSION_DIALOG)
    }

    private fun notResponding() {
        val package_ = runningApp ?: return
        appState = AppState.NOT_RESPONDING
        app?.block()
        logs.add("system", SYSTEM_SERVER_PID, SYSTEM_SERVER_PID + 42, 'E', "ActivityManager", "ANR in $package_ (${installedPackages[package_]})\nPID: $appPid\nReason: Input dispatching timed out")
        show(Overlay.ANR_DIALOG)
    }

    private fun toBackground() {
        if (runningApp == null) return
        appState = AppState.BACKGROUND
        app?.block()
        overlays.clear()
    }

    private fun toForeground() {
        if (runningApp == null || appState != AppState.BACKGROUND) return
        appState = AppState.RUNNING
        app?.unblock()
    }

    /** The app dies of an uncaught exception: its SDK reports it, and the runtime logs `FATAL EXCEPTION` in the crash buffer. */
    private fun crash(message: String) {
        val package_ = runningApp ?: return
        logs.add(
            "crash", appPid, appPid, 'E', "AndroidRuntime",
            "FATAL EXCEPTION: main\nProcess: $package_, PID: $appPid\njava.lang.IllegalStateException: $message\n" +
                "\tat app.folio.ledger.Ledger.balance(Ledger.kt:42)\n\tat app.folio.MainActivity.onResume(MainActivity.kt:27)",
        )
        app?.crash(message)
        stopApp()
    }

    // --- what a device answers -------------------------------------------------

    private fun ok(stdout: String = "", delayMs: Long = 0) = Reply.Shell(ShellResult(stdout, "", 0), delayMs)
    private fun fail(stderr: String, exitCode: Int = 1) = Reply.Shell(ShellResult("", stderr, exitCode))

    /**
     * A shell line as `sh -c` runs it: simple commands joined by `;`, `&&` and `||`
     * (no pipes, no quoting across them); the output of each, and the last exit code.
     * An input anywhere in the line counts as one input (one action of a run).
     */
    private fun runLine(line: String): Reply {
        val stdout = StringBuilder()
        val stderr = StringBuilder()
        var bytes: ByteArray? = null
        var exitCode = 0
        var delayMs = 0L
        val inputBefore = inputs
        for ((separator, command) in splitLine(line)) {
            if (separator == "&&" && exitCode != 0) continue
            if (separator == "||" && exitCode == 0) continue
            log += command
            val reply = behave(command)
            delayMs += reply.delayMs + latency.commandMs(command)
            when (reply) {
                is Reply.Shell -> {
                    stdout.append(reply.result.stdout)
                    stderr.append(reply.result.stderr)
                    exitCode = reply.result.exitCode
                }
                is Reply.Bytes -> {
                    bytes = reply.bytes
                    exitCode = 0
                }
                is Reply.Disconnect -> return reply
            }
        }
        if (inputs != inputBefore) afterInput()
        return bytes?.let { Reply.Bytes(it, delayMs) } ?: Reply.Shell(ShellResult(stdout.toString(), stderr.toString(), exitCode), delayMs)
    }

    /** The simple commands of a line, each with the separator before it ("" for the first). */
    private fun splitLine(line: String): List<Pair<String, String>> {
        val parts = mutableListOf<Pair<String, String>>()
        var separator = ""
        var start = 0
        var quote: Char? = null
        var i = 0
        while (i < line.length) {
            val c = line[i]
            when {
                quote != null -> if (c == quote) quote = null
                c == '\'' || c == '"' -> quote = c
                line.startsWith("&&", i) || line.startsWith("||", i) || c == ';' -> {
                    parts += separator to line.substring(start, i).trim()
                    separator = if (c == ';') ";" else line.substring(i, i + 2)
                    i += separator.length
                    start = i
                    continue
                }
            }
            i++
        }
        parts += separator to line.substring(start).trim()
        return parts.filter { it.second.isNotEmpty() }
    }

    private fun behave(command: String): Reply {
        val words = command.trim().split(Regex("\\s+"))
        return when {
            command == "cat /proc/uptime" -> ok("%d.%02d 9561.80\n".format(uptimeMs() / 1000, uptimeMs() % 1000 / 10))
            command == "wm size" -> ok("Physical size: $screenSize\n")
            command == "getprop sys.boot_completed" -> ok("1\n")
            command == "getprop ro.build.version.sdk" -> ok("$sdk\n")
            command == "settings get secure default_input_method" -> ok("$currentInputMethod\n")
            command == "dumpsys window displays" -> ok(windowDisplays())
            command == "dumpsys input_method" -> ok("  mCurMethodId=$currentInputMethod\n  mInputShown=${Overlay.KEYBOARD in overlays}\n")
            words.take(2) == listOf("dumpsys", "package") && words.size == 3 -> ok(packageDump(words[2]))
            words.take(2) == listOf("pm", "path") -> installedPackages[words[2]]
                ?.let { ok("package:/data/app/~~Xk3b9Q==/${words[2]}-7Hq2w==/base.apk\n") }
                ?: Reply.Shell(ShellResult("", "", 1))
            words.take(2) == listOf("pm", "clear") -> if (words[2] in installedPackages) {
                if (runningApp == words[2]) stopApp()
                granted.remove(words[2])
                ok("Success\n")
            } else {
                fail("Error: java.lang.SecurityException: Package ${words[2]} does not exist", 255)
            }
            words.take(2) == listOf("pm", "grant") -> grant(words)
            words.take(2) == listOf("pm", "install") -> install(words.drop(2).filterNot { it.startsWith("-") }.lastOrNull())
            words.take(2) == listOf("am", "force-stop") -> {
                if (runningApp == words[2]) stopApp()
                ok()
            }
            command.startsWith("cmd package resolve-activity") -> installedPackages[words.last()]
                ?.let { ok("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n$it\n") }
                ?: ok("No activity found\n")
            words.take(2) == listOf("am", "start") -> startActivity(command)
            words.firstOrNull() == "pidof" -> if (runningApp == words[1]) ok("$appPid\n") else Reply.Shell(ShellResult("", "", 1))
            words.firstOrNull() == "input" -> input(words)
            command.startsWith("am broadcast -a ADB_INPUT_B64") -> {
                inputs++
                ok("Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\nBroadcast completed: result=0\n")
            }
            words.firstOrNull() == "uiautomator" && words.getOrNull(1) == "dump" -> dump(words.drop(2))
            words.firstOrNull() == "cat" && words.size == 2 -> files[words[1]]?.let { ok(String(it, Charsets.UTF_8)) }
                ?: fail("cat: ${words[1]}: No such file or directory")
            words.firstOrNull() == "rm" -> {
                words.drop(1).filterNot { it.startsWith("-") }.forEach { files.remove(it) }
                ok()
            }
            command == "screencap -p" -> Reply.Bytes(screencap)
            words.firstOrNull() == "logcat" -> ok(logs.dump(DeviceLog.query(words)))
            words.firstOrNull() == "top" -> ok(top(words))
            else -> fail("/system/bin/sh: ${words.firstOrNull()}: inaccessible or not found", 127)
        }
    }

    /**
     * An input: a dialog on top takes it (its buttons; elsewhere nothing), BACK
     * hides the keyboard or dismisses the dialog, and otherwise the app moves to
     * its next screen.
     */
    private fun input(words: List<String>): Reply {
        inputs++
        val top = overlays.lastOrNull { it.takesFocus }
        if (words.getOrNull(1) == "keyevent" && words.getOrNull(2) == "4") {
            when {
                Overlay.KEYBOARD in overlays -> hide(Overlay.KEYBOARD)
                top == Overlay.PERMISSION_DIALOG -> hide(top)
                top == Overlay.ANR_DIALOG -> Unit // the ANR dialog stays until answered
                else -> nextScreen()
            }
            return ok()
        }
        if (top != null) {
            if (words.getOrNull(1) == "tap") tapOn(top, words.getOrNull(2)?.toIntOrNull() ?: -1, words.getOrNull(3)?.toIntOrNull() ?: -1)
            return ok()
        }
        nextScreen()
        return ok()
    }

    private fun nextScreen() {
        if (appState == AppState.RUNNING && screenIndex < screens.size - 1) screenIndex++
    }

    /** A tap on a dialog: its buttons act; elsewhere nothing happens (a modal dialog). */
    private fun tapOn(dialog: Overlay, x: Int, y: Int) {
        val dump = laidOut(builtinText(dialog.file))
        val button = Regex("""resource-id="([^"]+)"[^>]*clickable="true"[^>]*bounds="\[(\d+),(\d+)]\[(\d+),(\d+)]"""")
            .findAll(dump).firstOrNull { match ->
                val (_, left, top, right, bottom) = match.destructured
                x in left.toInt() until right.toInt() && y in top.toInt() until bottom.toInt()
            }?.groupValues?.get(1) ?: return
        val package_ = runningApp
        when {
            button.endsWith(":id/permission_allow_button") -> {
                if (package_ != null) asksAtStart[package_]?.let { granted.getOrPut(package_, ::mutableSetOf) += it }
                hide(dialog)
            }
            button.endsWith(":id/permission_deny_button") -> hide(dialog)
            button == "android:id/aerr_wait" -> hide(dialog)
            button == "android:id/aerr_close" -> {
                hide(dialog)
                stopApp()
            }
        }
    }

    /** What device.properties scripted for the input just made. */
    private fun afterInput() {
        scriptedEvents[inputs]?.forEach(::happen)
    }

    private fun grant(words: List<String>): Reply {
        val package_ = words.getOrNull(2) ?: return fail("Error: no package specified", 255)
        val permission = words.getOrNull(3) ?: return fail("Error: no permission specified", 255)
        if (package_ !in installedPackages) return fail("Error: java.lang.IllegalArgumentException: Unknown package: $package_", 255)
        if (permission !in requestedPermissions[package_].orEmpty()) {
            return fail(
                "Exception occurred while executing 'grant':\njava.lang.SecurityException: Package $package_ has not requested permission $permission",
                255,
            )
        }
        granted.getOrPut(package_, ::mutableSetOf) += permission
        return ok()
    }

    /**
     * `pm install PATH`: a zip file (an APK starts with "PK") installs [installablePackage];
     * the fake does not read APKs, so what it holds is said in device.properties.
     */
    private fun install(path: String?): Reply {
        val content = path?.let { files[it] }
            ?: return fail("Error: Unable to open file: $path\nConsider using a file under /data/local/tmp/\nError: Can't open file: $path\n")
        if (content.size < 2 || content[0] != 'P'.code.toByte() || content[1] != 'K'.code.toByte()) {
            return Reply.Shell(ShellResult("Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse $path: Failed to load asset path $path]\n", "", 1))
        }
        val package_ = installablePackage ?: return Reply.Shell(ShellResult("Failure [INSTALL_FAILED_INVALID_APK: no package]\n", "", 1))
        installedPackages.putIfAbsent(package_, "$package_/.MainActivity")
        if (runningApp == package_) stopApp()
        return ok("Performing Streamed Install\nSuccess\n")
    }

    private fun startActivity(command: String): Reply {
        val component = Regex("-n '?([^' ]+)'?").find(command)?.groupValues?.get(1)
            ?: return fail("Error: no component given")
        val package_ = component.substringBefore('/')
        if (package_ !in installedPackages) {
            return ok(
                "Starting: Intent { cmp=$component }\n" +
                    "Error type 3\nError: Activity class {$component} does not exist.\n",
            )
        }
        stopApp()
        runningApp = package_
        appState = AppState.RUNNING
        screenIndex = 0
        launches++
        logs.add("main", appPid, appPid, 'I', "ActivityThread", "Start proc $appPid:$package_/u0a190 for pre-top-activity {$component}")
        val token = appTokenOverride ?: extra(command, EXTRA_TOKEN)
        if (package_ in sdkApps && token != null) {
            // As the SDK's glue does: started by a launch that carries the run token, on the socket it names.
            this.app = FakeApp.start(package_, this, launches, token, extra(command, EXTRA_SOCKET) ?: DEFAULT_SOCKET)
        }
        asksAtStart[package_]?.let { askFor(package_, it) }
        val starting = "Starting: Intent { cmp=$component${if (command.contains("--es")) " (has extras)" else ""} }\n"
        val waited = "Status: ok\nLaunchState: COLD\nActivity: $component\nTotalTime: 412\nWaitTime: 418\nComplete\n"
        return ok(if (command.contains(" -W ")) starting + waited else starting)
    }

    /** The app's process ends, and with it its SDK's connection; the launcher is shown. */
    private fun stopApp() {
        runningApp = null
        appState = AppState.RUNNING
        overlays.clear()
        app?.close()
        app = null
    }

    /**
     * `uiautomator dump [--windows] [--compressed] [FILE]`, as AOSP's DumpCommand
     * does it: it waits for the screen to settle (and gives up after 10 s with
     * `ERROR: could not get idle state.` on stderr and exit code 0, leaving FILE as it
     * was), writes FILE (nothing for `/dev/tty`: a raw shell has no terminal, and the
     * write error is only logged), then prints `UI hierchary dumped to: FILE`.
     */
    private fun dump(arguments: List<String>): Reply {
        val allWindows = "--windows" in arguments
        val file = arguments.lastOrNull { !it.startsWith("-") } ?: "/sdcard/window_dump.xml"
        val (name, _) = shownScreen()
        if (runningApp != null && appState == AppState.RUNNING && overlays.none { it.takesFocus } && name in neverIdleScreens) {
            return Reply.Shell(ShellResult("", "ERROR: could not get idle state.\n", 0), latency.neverIdleDumpMs)
        }
        val xml = if (allWindows) allWindowsXml() else activeWindowXml()
            ?: return Reply.Shell(ShellResult("", "ERROR: null root node returned by UiTestAutomationBridge.\n", 0), latency.dumpMs())
        val done = "UI hierchary dumped to: $file\n"
        val stdout = when (file) {
            "/dev/tty" -> done
            "/dev/stdout" -> xml + done
            else -> {
                files[file] = xml.toByteArray(Charsets.UTF_8)
                done
            }
        }
        return ok(stdout, latency.dumpMs())
    }

    /** The windows on screen, top-most first: dialogs and keyboard, then the app or the launcher, and the status bar. */
    private fun windowsOnScreen(): List<DumpXml.Window> {
        val focus = overlays.lastOrNull { it.takesFocus }
        val shown = mutableListOf<DumpXml.Window>()
        overlays.asReversed().forEachIndexed { index, overlay ->
            shown += DumpXml.Window(overlay.title, overlay.type, overlay == focus, 30 - index, laidOut(builtinText(overlay.file)))
        }
        val appScreen = if (runningApp != null && appState != AppState.BACKGROUND) shownScreen().second else null
        if (appScreen != null) {
            shown += DumpXml.Window(appLabel(), "TYPE_APPLICATION", focus == null, 2, appScreen)
        } else {
            shown += DumpXml.Window("Launcher", "TYPE_APPLICATION", focus == null, 2, laidOut(builtinText("launcher.xml")))
        }
        shown += DumpXml.Window("Status bar", "TYPE_SYSTEM", false, 40, laidOut(builtinText("status-bar.xml")))
        return shown
    }

    private fun appLabel() = runningApp?.substringAfterLast('.')?.replaceFirstChar(Char::uppercaseChar) ?: ""

    private fun allWindowsXml(): String {
        val (width, height) = screenPixels()
        return DumpXml.windows(windowsOnScreen(), rotation, width, height)
    }

    /** The window with the focus, alone: what a dump without `--windows` holds (`getRootInActiveWindow`). */
    private fun activeWindowXml(): String? {
        val active = windowsOnScreen().firstOrNull { it.focused } ?: return null
        return DumpXml.single(DumpXml.nodesOf(active.content), rotation)
    }

    /**
     * `dumpsys window displays` on Android 10+, the lines a reader needs among
     * the many a device prints: the display's size now (`cur=`), the focused window
     * and app, and the rotation.
     */
    private fun windowDisplays(): String {
        val (width, height) = screenPixels()
        val focus = overlays.lastOrNull { it.takesFocus }
        val package_ = runningApp
        val activity = package_?.let { installedPackages[it] }
        val launcher = "com.google.android.apps.nexuslauncher/.NexusLauncherActivity"
        val appInFront = package_ != null && appState != AppState.BACKGROUND
        val focusTitle = when {
            focus == Overlay.ANR_DIALOG && package_ != null -> "Application Not Responding: $package_"
            focus == Overlay.PERMISSION_DIALOG -> "com.google.android.permissioncontroller/com.android.permissioncontroller.permission.ui.GrantPermissionsActivity"
            appInFront && activity != null -> activity.replace("/.", "/${package_}.")
            else -> launcher.replace("/.", "/com.google.android.apps.nexuslauncher.")
        }
        val focusedApp = when {
            focus == Overlay.PERMISSION_DIALOG -> "com.google.android.permissioncontroller/com.android.permissioncontroller.permission.ui.GrantPermissionsActivity"
            appInFront && activity != null -> activity
            else -> launcher
        }
        return """
            |WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)
            |  Display: mDisplayId=0 rootTasks=3
            |    init=${screenSize} 420dpi base=${screenSize} cur=${width}x$height app=${width}x${height - 87} rng=1080x1017-2337x2274
            |    deferred=false mLayoutNeeded=false mTouchExcludeRegion=SkRegion((0,0,$width,$height))
            |
            |  mCurrentFocus=Window{8d3a1c2 u0 $focusTitle}
            |  mFocusedApp=ActivityRecord{5c6e1a7 u0 $focusedApp t12}
            |
            |  DisplayRotation
            |    mCurrentAppOrientation=SCREEN_ORIENTATION_UNSPECIFIED
            |    mRotation=$rotation mDeferredRotationPauseCount=0
            |""".trimMargin()
    }

    /** `dumpsys package PKG`: the package's flags, and its runtime permissions and whether each is granted. */
    private fun packageDump(package_: String): String {
        if (package_ !in installedPackages) return "Unable to find package: $package_\n"
        val requested = requestedPermissions[package_].orEmpty()
        return buildString {
            append("Packages:\n  Package [$package_] (a3f19c2):\n    userId=10190\n")
            val debuggable = if (package_ in releaseBuilds) "" else " DEBUGGABLE"
            append("    flags=[$debuggable HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n")
            append("    requested permissions:\n")
            requested.forEach { append("      ").append(it).append('\n') }
            append("    User 0: ceDataInode=81234 installed=true hidden=false suspended=false stopped=false\n")
            append("      runtime permissions:\n")
            for (permission in requested) {
                val isGranted = permission in granted[package_].orEmpty()
                append("        $permission: granted=$isGranted, flags=[ USER_SENSITIVE_WHEN_GRANTED|USER_SENSITIVE_WHEN_DENIED]\n")
            }
        }
    }

    private fun top(words: List<String>): String {
        val pid = words.getOrNull(words.indexOf("-p") + 1)?.toIntOrNull()
        val row = if (pid == appPid && runningApp != null) " $appPid 12.5 187M\n" else ""
        return "Tasks: 1 total,   0 running,   1 sleeping,   0 stopped,   0 zombie\n" +
            "  Mem:  3.8G total,  3.6G used,  190M free,  6.8M buffers\n" +
            " Swap:  2.8G total,  1.0G used,  1.8G free,  1.7G cached\n" +
            "800%cpu  12%user   0%nice  13%sys 775%idle   0%iow   0%irq   0%sirq   0%host\n" +
            "  PID %CPU   RES\n" + row
    }

    companion object {
        /** The launch extras of the SDK (proto/agent.md §1a), and its default abstract socket. */
        const val EXTRA_TOKEN = "uatu.token"
        const val EXTRA_SOCKET = "uatu.socket"
        const val DEFAULT_SOCKET = "uatu-agent"
        private const val SYSTEM_SERVER_PID = 1611

        /** The value of `am start`'s string extra `--es NAME VALUE` (a shell word, quoted or not). */
        fun extra(command: String, name: String): String? {
            val word = Regex("--es ${Regex.escape(name)} ('(?:[^']|'\\\\'')*'|\\S+)").find(command)?.groupValues?.get(1) ?: return null
            return if (word.startsWith("'")) word.removeSurrounding("'").replace("'\\''", "'") else word
        }

        private fun builtinFile(name: String): ByteArray =
            ScriptedDevice::class.java.getResourceAsStream("/fake-device/$name")?.use { it.readBytes() }
                ?: throw IOException("the built-in fake device has no $name")

        private fun builtinText(name: String) = String(builtinFile(name), Charsets.UTF_8)

        private fun deviceFile(dir: Path, name: String): ByteArray {
            val file = dir.resolve(name)
            if (!Files.isRegularFile(file)) throw IOException("--fake-device: $file is missing (named in device.properties)")
            return Files.readAllBytes(file)
        }

        /** The options of a `--fake-device` selector after `?`; test-only knobs. */
        const val OPTION_APP_TOKEN = "app-token"

        /**
         * The device `--fake-device` serves: `builtin` (bundled in the JAR) or a
         * directory holding `device.properties` and the files it names (see
         * docs/devices.md, "The fake device"), optionally followed by test-only
         * options: `?app-token=TOKEN` makes the app's SDK present TOKEN instead of
         * the run's (to test the host's refusal).
         */
        fun load(selector: String): ScriptedDevice {
            val source = selector.substringBefore('?')
            val options = selector.substringAfter('?', "").split('&').filter { it.isNotEmpty() }
                .associate { it.substringBefore('=') to it.substringAfter('=', "") }
            val unknown = options.keys - setOf(OPTION_APP_TOKEN)
            if (unknown.isNotEmpty()) {
                throw IOException("--fake-device $selector: unknown option ${unknown.joinToString()} (the only one is `$OPTION_APP_TOKEN=TOKEN`, for tests)")
            }
            val read: (String) -> ByteArray = if (source == "builtin") {
                ::builtinFile
            } else {
                val dir = Path.of(source)
                if (!Files.isDirectory(dir)) throw IOException("--fake-device $source: not a directory (nor `builtin`)")
                ({ name -> deviceFile(dir, name) })
            }
            val properties = Properties().apply { read("device.properties").inputStream().use { load(it.reader(Charsets.UTF_8)) } }
            fun property(name: String) = properties.getProperty(name)?.trim()
                ?: throw IOException("--fake-device $source: device.properties has no `$name`")
            fun list(name: String) = properties.getProperty(name).orEmpty().split(',').map { it.trim() }.filter { it.isNotEmpty() }
            val packages = list("packages").associateWith { app -> properties.getProperty("launcher.$app")?.trim() ?: "$app/.MainActivity" }
            val screenFiles = list("screens")
            val latency = properties.getProperty("latency")?.trim()?.let { text ->
                DeviceLatency.parse(text) ?: throw IOException("--fake-device $source: latency `$text` is neither `instant` nor `realistic[:SEED]`")
            } ?: DeviceLatency.INSTANT
            val events = properties.stringPropertyNames().filter { it.startsWith("on.input.") }.associate { key ->
                val count = key.removePrefix("on.input.").toIntOrNull()
                    ?: throw IOException("--fake-device $source: `$key` must be on.input.N with N a number")
                val named = properties.getProperty(key).split(',').map { it.trim() }.filter { it.isNotEmpty() }
                named.firstOrNull { it !in Events.ALL }?.let {
                    throw IOException("--fake-device $source: `$key=$it` is no device event (known: ${Events.ALL.joinToString()})")
                }
                count to named
            }
            return ScriptedDevice(
                serial = property("serial"),
                screens = screenFiles.map { String(read(it), Charsets.UTF_8) },
                screenNames = screenFiles.map { it.substringAfterLast('/').substringBeforeLast('.') },
                screencap = read(property("screencap")),
                logcat = properties.getProperty("logcat")?.let { String(read(it.trim()), Charsets.UTF_8) } ?: "",
                installedPackages = packages.toMutableMap(),
                screenSize = property("screen"),
                sdkApps = list("sdk").toSet(),
                appTokenOverride = options[OPTION_APP_TOKEN],
                latency = latency,
                neverIdleScreens = list("never-idle").map { it.substringAfterLast('/').substringBeforeLast('.') }.toSet(),
                requestedPermissions = packages.keys.associateWith { list("permissions.$it") },
                asksAtStart = packages.keys.mapNotNull { app -> properties.getProperty("asks.$app")?.trim()?.let { app to it } }.toMap(),
                scriptedEvents = events,
                installablePackage = properties.getProperty("installs")?.trim(),
                releaseBuilds = list("release-builds").toSet(),
            )
        }
    }
}
