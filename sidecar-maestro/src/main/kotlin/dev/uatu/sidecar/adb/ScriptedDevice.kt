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
 * what this machine cannot have: tests drive the real backend against it, and
 * `--fake-device` serves it from the real sidecar JAR so the real uatu host can
 * be tested against the real sidecar.
 *
 * It models one app: installed or not, started by `am start`, with a pid while
 * it runs. The screen is a list of UIAutomator dumps: each input moves to the
 * next one and the last one stays. Tests add [on] rules that answer matching
 * commands first (a sequence of replies, the last repeating): errors, busy
 * dumps, slow answers, changing screens.
 *
 * An app listed in [sdkApps] links uatu's SDK: `am start` with the run token
 * (`--es uatu.token T`, proto/agent.md §1a) starts it as a [FakeApp] (the real
 * SDK core) that connects through the reverse forward; `am force-stop`,
 * `pm clear` and closing the device stop it.
 */
class ScriptedDevice(
    override val serial: String = "emulator-5554",
    screens: List<String> = emptyList(),
    var screencap: ByteArray = ByteArray(0),
    var logcat: String = "",
    var installedPackages: MutableMap<String, String> = mutableMapOf(), // package -> launcher activity
    var screenSize: String = "1080x2424",
    var sdk: Int = 34,
    var uptime: String = "4837.42 9561.80",
    var appPid: Int = 4242,
    /** The `uiautomator dump` output paths this device can write to (a device without a tty refuses /dev/tty). */
    var dumpTargets: Set<String> = setOf("/dev/tty", "/dev/stdout", "file"),
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

    private val rules = mutableListOf<Rule>()
    private val log = mutableListOf<String>()
    private val files = mutableMapOf<String, ByteArray>()
    /** Read by the fake app's SDK thread without the device's lock. */
    private val forwards = java.util.concurrent.ConcurrentHashMap<String, Int>()

    // Written under the device's lock; volatile so the fake app's main thread reads them without it.
    @Volatile
    private var screens: List<String> = screens

    @Volatile
    private var screenNames: List<String> = screenNames

    @Volatile
    private var screenIndex = 0
    private var runningApp: String? = null
    private var app: FakeApp? = null
    private var launches = 0

    @Volatile
    var closed = false
        private set

    /** Every command received (shell and exec), in order. */
    val commands: List<String> get() = synchronized(this) { log.toList() }

    /** Reverse forwards in place: device socket -> host port. */
    val reverseForwards: Map<String, Int> get() = forwards.toMap()

    /** Answers commands containing `fragment` with `replies` in turn (the last one repeats). Earlier rules win. */
    fun on(fragment: String, vararg replies: Reply): ScriptedDevice = on({ it.contains(fragment) }, *replies)

    fun on(matches: (String) -> Boolean, vararg replies: Reply): ScriptedDevice {
        require(replies.isNotEmpty()) { "a rule needs at least one reply" }
        val queue = ArrayDeque(replies.toList())
        return onEvery(matches) { if (queue.size > 1) queue.removeFirst() else queue.first() }
    }

    /** Answers each matching command with what `respond` makes of it. Earlier rules win. */
    fun onEvery(matches: (String) -> Boolean, respond: (String) -> Reply): ScriptedDevice = synchronized(this) {
        rules += Rule(matches, respond)
        this
    }

    fun setScreens(dumps: List<String>, names: List<String> = emptyList()) = synchronized(this) {
        screens = dumps
        screenNames = names
        screenIndex = 0
    }

    /** The screen shown now, by name, and its dump (what the fake app's own window holds). */
    fun shownScreen(): Pair<String, String?> {
        val index = screenIndex
        return (screenNames.getOrNull(index) ?: "screen-$index") to screens.getOrNull(index)
    }

    /** `wm size`, as numbers. */
    fun screenPixels(): Pair<Int, Int> {
        val (width, height) = screenSize.split('x').map { it.trim().toIntOrNull() ?: 0 } + listOf(0, 0)
        return width to height
    }

    val currentScreen: String? get() = synchronized(this) { screens.getOrNull(screenIndex) }

    override fun shell(command: String): ShellResult = when (val reply = answer(command)) {
        is Reply.Shell -> reply.result
        is Reply.Bytes -> ShellResult(String(reply.bytes, Charsets.UTF_8), "", 0)
        is Reply.Disconnect -> throw IOException(reply.message)
    }

    override fun execOut(command: String): ByteArray = when (val reply = answer(command)) {
        is Reply.Shell -> reply.result.stdout.toByteArray(Charsets.UTF_8)
        is Reply.Bytes -> reply.bytes
        is Reply.Disconnect -> throw IOException(reply.message)
    }

    private fun answer(command: String): Reply {
        val reply = synchronized(this) {
            check(!closed) { "the fake device $serial was closed" }
            log += command
            rules.firstOrNull { it.matches(command) }?.respond?.invoke(command) ?: behave(command)
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

    // --- what a device answers -------------------------------------------------

    private fun ok(stdout: String = "") = Reply.Shell(ShellResult(stdout, "", 0))
    private fun fail(stderr: String, exitCode: Int = 1) = Reply.Shell(ShellResult("", stderr, exitCode))

    private fun behave(command: String): Reply {
        val words = command.trim().split(Regex("\\s+"))
        return when {
            command == "cat /proc/uptime" -> ok("$uptime\n")
            command == "wm size" -> ok("Physical size: $screenSize\n")
            command == "getprop sys.boot_completed" -> ok("1\n")
            command == "getprop ro.build.version.sdk" -> ok("$sdk\n")
            command == "settings get secure default_input_method" -> ok("$currentInputMethod\n")
            words.take(2) == listOf("pm", "path") -> installedPackages[words[2]]
                ?.let { ok("package:/data/app/~~Xk3b9Q==/${words[2]}-7Hq2w==/base.apk\n") }
                ?: Reply.Shell(ShellResult("", "", 1))
            words.take(2) == listOf("pm", "clear") -> if (words[2] in installedPackages) {
                if (runningApp == words[2]) stopApp()
                ok("Success\n")
            } else {
                fail("Error: java.lang.SecurityException: Package ${words[2]} does not exist", 255)
            }
            words.take(2) == listOf("am", "force-stop") -> {
                if (runningApp == words[2]) stopApp()
                ok()
            }
            command.startsWith("cmd package resolve-activity") -> installedPackages[words.last()]
                ?.let { ok("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n$it\n") }
                ?: ok("No activity found\n")
            words.take(2) == listOf("am", "start") -> startActivity(command)
            words.firstOrNull() == "pidof" -> if (runningApp == words[1]) ok("$appPid\n") else Reply.Shell(ShellResult("", "", 1))
            words.firstOrNull() == "input" -> {
                if (screenIndex < screens.size - 1) screenIndex++
                ok()
            }
            command.startsWith("am broadcast -a ADB_INPUT_B64") -> {
                if (screenIndex < screens.size - 1) screenIndex++
                ok("Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\nBroadcast completed: result=0\n")
            }
            command.startsWith("uiautomator dump") -> dump(command)
            command == "screencap -p" -> Reply.Bytes(screencap)
            words.firstOrNull() == "logcat" -> ok(logcatOf(words))
            words.firstOrNull() == "top" -> ok(top(words))
            else -> fail("/system/bin/sh: ${words.firstOrNull()}: inaccessible or not found", 127)
        }
    }

    private fun startActivity(command: String): Reply {
        val component = Regex("-n '?([^' ]+)'?").find(command)?.groupValues?.get(1)
            ?: return fail("Error: no component given")
        val app = component.substringBefore('/')
        if (app !in installedPackages) {
            return ok(
                "Starting: Intent { cmp=$component }\n" +
                    "Error type 3\nError: Activity class {$component} does not exist.\n",
            )
        }
        stopApp()
        runningApp = app
        screenIndex = 0
        launches++
        val token = appTokenOverride ?: extra(command, EXTRA_TOKEN)
        if (app in sdkApps && token != null) {
            // As the SDK's glue does: started by a launch that carries the run token, on the socket it names.
            this.app = FakeApp.start(app, this, launches, token, extra(command, EXTRA_SOCKET) ?: DEFAULT_SOCKET)
        }
        val starting = "Starting: Intent { cmp=$component${if (command.contains("--es")) " (has extras)" else ""} }\n"
        val waited = "Status: ok\nLaunchState: COLD\nActivity: $component\nTotalTime: 412\nWaitTime: 418\nComplete\n"
        return ok(if (command.contains(" -W ")) starting + waited else starting)
    }

    /** The app's process ends, and with it its SDK's connection. */
    private fun stopApp() {
        runningApp = null
        app?.close()
        app = null
    }

    private fun dump(command: String): Reply {
        val target = when {
            command.contains("/dev/tty") -> "/dev/tty"
            command.contains("/dev/stdout") -> "/dev/stdout"
            else -> "file"
        }
        if (target !in dumpTargets) {
            return fail("java.io.FileNotFoundException: $target: open failed: ENXIO (No such device or address)")
        }
        val xml = screens.getOrNull(screenIndex) ?: return ok("ERROR: null root node returned by UiTestAutomationBridge.\n")
        return if (target == "file") {
            val path = command.substringAfter("dump ").substringBefore(' ')
            ok("UI hierchary dumped to: $path\n$xml")
        } else {
            ok("${xml}UI hierchary dumped to: $target\n")
        }
    }

    /** The log lines `logcat --pid=PID` prints: that process's entries (and the buffer headers). */
    private fun logcatOf(words: List<String>): String {
        val pid = words.firstOrNull { it.startsWith("--pid=") }?.removePrefix("--pid=") ?: return logcat
        return logcat.lines().filter { line ->
            line.startsWith("---") || line.trim().split(Regex("\\s+")).getOrNull(1) == pid
        }.joinToString("\n")
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

        /** The value of `am start`'s string extra `--es NAME VALUE` (a shell word, quoted or not). */
        fun extra(command: String, name: String): String? {
            val word = Regex("--es ${Regex.escape(name)} ('(?:[^']|'\\\\'')*'|\\S+)").find(command)?.groupValues?.get(1) ?: return null
            return if (word.startsWith("'")) word.removeSurrounding("'").replace("'\\''", "'") else word
        }

        private fun builtinFile(name: String): ByteArray =
            ScriptedDevice::class.java.getResourceAsStream("/fake-device/$name")?.use { it.readBytes() }
                ?: throw IOException("the built-in fake device has no $name")

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
            val packages = property("packages").split(',').map { it.trim() }.filter { it.isNotEmpty() }
                .associateWith { app -> properties.getProperty("launcher.$app")?.trim() ?: "$app/.MainActivity" }
            val screenFiles = property("screens").split(',').map { it.trim() }
            return ScriptedDevice(
                serial = property("serial"),
                screens = screenFiles.map { String(read(it), Charsets.UTF_8) },
                screenNames = screenFiles.map { it.substringAfterLast('/').substringBeforeLast('.') },
                screencap = read(property("screencap")),
                logcat = properties.getProperty("logcat")?.let { String(read(it.trim()), Charsets.UTF_8) } ?: "",
                installedPackages = packages.toMutableMap(),
                screenSize = property("screen"),
                sdkApps = properties.getProperty("sdk").orEmpty().split(',').map { it.trim() }.filter { it.isNotEmpty() }.toSet(),
                appTokenOverride = options[OPTION_APP_TOKEN],
            )
        }
    }
}
