package dev.uatu.sdk.harness

import dev.uatu.sdk.core.Agent
import dev.uatu.sdk.core.AgentOptions
import dev.uatu.sdk.core.PROTOCOL_VERSION
import dev.uatu.sdk.core.TcpTransport
import dev.uatu.sdk.core.Transport
import java.io.File
import java.nio.file.Path
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.system.exitProcess

/**
 * A JVM app using the SDK's core as an Android app uses it, so the real Rust
 * host can be tested against the real Kotlin SDK (the host's
 * `cli/tests/all/sdk_android_harness.rs`). A main loop ticks like frames, 20 extractors
 * read its state, and flags make it misbehave on purpose.
 *
 * Run it with the main jar, the tests jar and every jar of `target/harness-lib`
 * on the class path (docs/sdk-android.md gives the command).
 */
object HarnessMain {
    const val USAGE = """usage: HarnessMain (--socket PATH | --tcp PORT) [options]
  --token TOKEN               the run token to present in HELLO
  --protocol-version N        speak this protocol version (default: the SDK's)
  --extractors N              register N extractors (default 20)
  --crash-after-pauses N      throw an uncaught exception on the main loop after answering N pauses
  --crash-file PATH           where a crash is kept for the next process
  --hold-timeout-ms N         how long a pause may hold the main loop (default 10000)
  --app-id ID                 the app id of HELLO (default dev.uatu.harness)
Exits 2 when the host refuses it for good (version or token), 70 on its crash."""

    class Options(
        val transport: Transport,
        val token: String?,
        val protocolVersion: Long,
        val extractors: Int,
        val crashAfterPauses: Long?,
        val crashFile: File?,
        val holdTimeoutMillis: Long,
        val appId: String,
    )

    fun parse(args: Array<String>): Options {
        val values = mutableMapOf<String, String>()
        var i = 0
        while (i < args.size) {
            val flag = args[i]
            require(flag.startsWith("--") && i + 1 < args.size) { "unexpected argument $flag" }
            values[flag.removePrefix("--")] = args[i + 1]
            i += 2
        }
        fun long(name: String): Long? = values.remove(name)?.let { it.toLongOrNull() ?: throw IllegalArgumentException("--$name needs a number, not $it") }
        val socket = values.remove("socket")
        val tcp = long("tcp")
        val transport = when {
            socket != null && tcp == null -> UnixSocketTransport(Path.of(socket))
            tcp != null && socket == null -> TcpTransport(tcp.toInt())
            else -> throw IllegalArgumentException("give exactly one of --socket PATH and --tcp PORT")
        }
        val options = Options(
            transport = transport,
            token = values.remove("token"),
            protocolVersion = long("protocol-version") ?: PROTOCOL_VERSION,
            extractors = (long("extractors") ?: 20).toInt(),
            crashAfterPauses = long("crash-after-pauses"),
            crashFile = values.remove("crash-file")?.let(::File),
            holdTimeoutMillis = long("hold-timeout-ms") ?: 10_000,
            appId = values.remove("app-id") ?: "dev.uatu.harness",
        )
        require(values.isEmpty()) { "unknown option(s) ${values.keys.joinToString { "--$it" }}" }
        return options
    }

    @JvmStatic
    fun main(args: Array<String>) {
        val options = try {
            parse(args)
        } catch (e: IllegalArgumentException) {
            System.err.println("HarnessMain: ${e.message}\n$USAGE")
            exitProcess(64)
        }
        // What Android's runtime does after the SDK has reported a crash: the process dies.
        Thread.setDefaultUncaughtExceptionHandler { thread, error ->
            System.err.println("HarnessMain: uncaught exception in ${thread.name}: $error")
            Runtime.getRuntime().halt(70)
        }
        val app = HarnessApp(options)
        app.start()
        while (true) {
            Thread.sleep(50)
            app.agent.refusal?.let {
                System.err.println("HarnessMain: refused by the host: $it")
                exitProcess(2)
            }
        }
    }
}

/** The harness's app: a main loop, its state, and the SDK reading it. */
class HarnessApp(private val options: HarnessMain.Options) {
    val agent = Agent()
    val main = MainLoop()

    /** Main-loop state, only touched on the main loop. */
    private var frames = 0L
    private var pausesAnswered = 0L

    fun start() {
        agent.extract("pauses") { ++pausesAnswered }
        for (n in 1 until options.extractors) {
            val name = "value_%02d".format(n)
            when (n % 4) {
                0 -> agent.extract(name) { n * 1_000L + frames % 7 }
                1 -> agent.extract(name) { "screen-${n}" }
                2 -> agent.extract(name) { mapOf("n" to n, "ok" to true, "items" to listOf(n, n + 1, n + 2)) }
                else -> agent.extract(name) { listOf("a", "b", null) }
            }
        }
        agent.start(
            AgentOptions(
                transport = options.transport,
                safePoint = main,
                appId = options.appId,
                platform = "jvm",
                token = options.token,
                crashFile = options.crashFile,
                // The app's threads: the main loop and what it starts (not the frame clock, which stands for vsync).
                crashes = main.threads,
                holdTimeoutMillis = options.holdTimeoutMillis,
                protocolVersion = options.protocolVersion,
                report = { level, message -> System.err.println("uatu [$level] $message") },
            ),
        )
        startFrames()
    }

    /** A "frame" of the app every 16 ms, posted only when the previous one ran (none pile up during a pause). */
    private fun startFrames() {
        val pending = AtomicBoolean(false)
        val clock = Executors.newSingleThreadScheduledExecutor { Thread(it, "frame-clock").apply { isDaemon = true } }
        clock.scheduleAtFixedRate({
            if (pending.compareAndSet(false, true)) {
                main.post {
                    pending.set(false)
                    frame()
                }
            }
        }, 16, 16, TimeUnit.MILLISECONDS)
    }

    private fun frame() {
        frames++
        val crashAfter = options.crashAfterPauses
        if (crashAfter != null && pausesAnswered >= crashAfter) {
            throw IllegalStateException("harness crash after $pausesAnswered pauses")
        }
    }
}
