package dev.uatu.sdk.core

import java.io.File

/** How an [Agent] reaches and introduces itself to the host. */
class AgentOptions(
    val transport: Transport,
    val safePoint: SafePoint,
    val appId: String,
    val platform: String,
    /** The run token the host handed the app at launch, or null when it handed none. */
    val token: String? = null,
    /** Where a crashing process leaves its exception for the next one; none when null. */
    val crashFile: File? = null,
    /** Which threads are the app's: their uncaught exceptions are its crashes. None are watched when null. */
    val crashes: CrashWatch? = null,
    /** Reads the app's windows on the main thread, when the platform can. */
    val hierarchy: HierarchySource? = null,
    val coverage: CoverageSource? = null,
    /** How long the main thread waits for RESUME before it goes on by itself. */
    val holdTimeoutMillis: Long = 10_000,
    /** Lets a test harness speak a protocol version the host refuses. */
    val protocolVersion: Long = PROTOCOL_VERSION,
    /** Where the SDK's own errors go besides the log buffer (logcat on Android). */
    val report: (LogLevel, String) -> Unit = { _, _ -> },
    val backoff: Backoff = Backoff(),
)

/** Reads the app's windows as driver.proto's hierarchy, on the main thread. */
fun interface HierarchySource {
    /** The windows, or null when nothing in them can be read (the host then uses the device's dump). */
    fun capture(): Hierarchy?
}

/**
 * The platform-free SDK: the registries the app fills (extractors, reported
 * errors, logs) and, once [start]ed, the connection to the host that reads them
 * at each pause. Everything an app calls is cheap and never throws.
 */
class Agent(private val clock: () -> Long = System::currentTimeMillis) {
    val extractors = Extractors()
    val logs = LogBuffer(clock = clock)
    private val reported = ArrayList<ExceptionInfo>()

    @Volatile
    private var running: Running? = null

    private inner class Running(val options: AgentOptions) : StateSource {
        val crashes = options.crashFile?.let(::CrashStore)
        val pauser = Pauser(options.safePoint, this, options.holdTimeoutMillis, logs)
        val client = Client(options.transport, ::hello, pauser, logs, options.report, options.backoff)
        private var crashWatch: AutoCloseable? = null

        /** Whether the log already says that the app's windows cannot be read (said once, not at every pause). */
        private var opaqueReported = false
        private var crashesInFlight = emptyList<ExceptionInfo>()

        fun hello() = Message.Hello(
            protocolVersion = options.protocolVersion,
            sdkVersion = SDK_VERSION,
            platform = options.platform,
            appId = options.appId,
            token = options.token,
            capabilities = if (options.hierarchy != null) listOf(CAPABILITY_HIERARCHY) else emptyList(),
        )

        override fun collect(id: Long, hierarchy: Boolean): Message.State {
            val now = clock()
            val snapshot = extractors.read(now)
            // The previous process's crash goes in the first STATE of this one (§5).
            crashesInFlight = crashes?.load().orEmpty()
            val exceptions = crashesInFlight + synchronized(reported) { reported.toList().also { reported.clear() } } + snapshot.exceptions
            val screen = if (hierarchy) captureHierarchy(now) else null
            return Message.State(
                id = id,
                snapshots = snapshot.values,
                exceptions = exceptions,
                logs = logs.drain() + snapshot.logs,
                coverage = options.coverage?.let { source -> safely(now, "coverage") { source.drainHits().toList() } ?: emptyList() },
                hierarchy = screen,
            )
        }

        private fun captureHierarchy(now: Long): Hierarchy? {
            val source = options.hierarchy ?: run {
                logs.add(LogLevel.WARN, SDK_LOG_TAG, "uatu: the host asked for the hierarchy, which this SDK cannot read")
                return null
            }
            return safely(now, "hierarchy") {
                source.capture().also { captured ->
                    if (captured == null && !opaqueReported) {
                        opaqueReported = true
                        logs.add(LogEntry(now, LogLevel.INFO, SDK_LOG_TAG, "uatu: nothing in the app's windows can be read (one opaque view?): no hierarchy, the host uses the dump"))
                    }
                }
            }
        }

        private fun <T> safely(now: Long, what: String, block: () -> T): T? = try {
            block()
        } catch (e: Exception) {
            logs.add(LogEntry(now, LogLevel.ERROR, SDK_LOG_TAG, "uatu could not read the $what: $e"))
            null
        }

        override fun settle(state: Message.State, delivered: Boolean) {
            if (delivered) {
                if (crashesInFlight.isNotEmpty()) crashes?.clear()
                return
            }
            // Not lost: the next STATE carries them.
            val own = state.exceptions.drop(crashesInFlight.size)
            synchronized(reported) { reported.addAll(0, own) }
            logs.restore(state.logs)
        }

        fun watchCrashes() {
            crashWatch = options.crashes?.watch(::onCrash)
        }

        fun stopWatchingCrashes() {
            crashWatch?.close()
            crashWatch = null
        }

        /** Persists the exception and says GOODBYE (§5); the [CrashWatch] then lets the thread die as it would have. */
        private fun onCrash(thread: Thread, throwable: Throwable) {
            val info = ExceptionInfo.of(throwable, clock())
            try {
                crashes?.save(info)
            } finally {
                client.sayGoodbye("crash: ${info.className}: ${info.message}")
            }
        }
    }

    /** Registers the value [name] read at every pause. */
    fun extract(name: String, extractor: () -> Any?) = extractors.register(name, extractor)

    /** An exception the app caught but wants the host to see, in the next STATE. */
    fun reportError(throwable: Throwable) {
        synchronized(reported) { reported += ExceptionInfo.of(throwable, clock()) }
    }

    fun log(level: LogLevel, tag: String, message: String) = logs.add(level, tag, message)

    val isStarted: Boolean get() = running != null
    val isConnected: Boolean get() = running?.client?.isConnected == true

    /** Why the host refused this SDK for good, if it did. */
    val refusal: String? get() = running?.client?.refusal

    /** The id of the pause holding the main thread, if one does. */
    val pausedId: Long? get() = running?.pauser?.pausedId

    /** Connects to the host and watches the app's threads for crashes; a second call does nothing. */
    fun start(options: AgentOptions) {
        val started = synchronized(this) {
            if (running != null) return
            Running(options).also { running = it }
        }
        started.watchCrashes()
        started.client.start()
    }

    /** Stops watching for crashes, says GOODBYE and disconnects. */
    fun stop(reason: String = "the app stopped the uatu SDK") {
        val stopping = synchronized(this) { running.also { running = null } } ?: return
        stopping.stopWatchingCrashes()
        stopping.client.stop(reason)
    }

    companion object {
        const val SDK_VERSION = "0.1.0"
    }
}
