package dev.uatu.sdk.android

import android.app.Activity
import android.app.Application
import android.content.Intent
import android.content.pm.ApplicationInfo
import android.os.Bundle
import android.util.Log
import dev.uatu.sdk.core.Agent
import dev.uatu.sdk.core.AgentOptions
import dev.uatu.sdk.core.LogLevel
import dev.uatu.sdk.core.ProcessCrashWatch
import dev.uatu.sdk.core.Transport
import java.io.File

/**
 * Wires the core to Android: it waits for the first activity's launch intent,
 * and only if that carries uatu's run token (`uatu.token`) starts the agent on
 * the abstract local socket the sidecar forwards to the host, with the
 * Choreographer as the safe point and the app's View tree as the hierarchy.
 */
object AndroidGlue {
    const val TAG = "uatu"
    const val EXTRA_TOKEN = "uatu.token"
    const val EXTRA_SOCKET = "uatu.socket"
    const val DEFAULT_SOCKET = "uatu-agent"

    /**
     * The longest a pause holds the main thread without RESUME: below the 5 s after
     * which Android reports an input event not handled as an ANR (the host sends no
     * input during a pause, but the user or the system may).
     */
    const val HOLD_TIMEOUT_MILLIS = 4_000L

    /** Where a crash waits for the next process, under the app's no-backup files. */
    fun crashFile(application: Application) = File(application.noBackupFilesDir, "uatu/pending-crash.json")

    fun isDebuggable(application: Application) =
        application.applicationInfo.flags and ApplicationInfo.FLAG_DEBUGGABLE != 0

    /** Replaces the abstract socket in tests (Robolectric has no local sockets; they use a Unix socket). */
    internal var testTransport: ((socketName: String) -> Transport)? = null

    /** Starts [agent] once an activity is launched with a run token. */
    fun start(application: Application, agent: Agent) {
        if (!isDebuggable(application)) return
        application.registerActivityLifecycleCallbacks(object : LifecycleAdapter() {
            override fun onActivityCreated(activity: Activity, savedInstanceState: Bundle?) {
                val launch = LaunchExtras.of(activity.intent) ?: return
                application.unregisterActivityLifecycleCallbacks(this)
                // Registered now, it still sees this activity's onStart.
                val windows = ActivityWindows().also(application::registerActivityLifecycleCallbacks)
                val socketName = launch.socket ?: DEFAULT_SOCKET
                agent.start(
                    AgentOptions(
                        transport = testTransport?.invoke(socketName) ?: LocalSocketTransport(socketName),
                        safePoint = ChoreographerSafePoint(),
                        appId = application.packageName,
                        platform = "android",
                        token = launch.token,
                        crashFile = crashFile(application),
                        // An app process is the app: an uncaught exception on any of its threads ends it.
                        crashes = ProcessCrashWatch,
                        hierarchy = ViewHierarchySource(application, windows),
                        holdTimeoutMillis = HOLD_TIMEOUT_MILLIS,
                        report = ::logcat,
                    ),
                )
                Log.i(TAG, "uatu SDK ${Agent.SDK_VERSION} started; connecting to the host on @$socketName")
            }
        })
    }

    private fun logcat(level: LogLevel, message: String) {
        when (level) {
            LogLevel.ERROR, LogLevel.FATAL -> Log.e(TAG, message)
            LogLevel.WARN -> Log.w(TAG, message)
            else -> Log.i(TAG, message)
        }
    }
}

/** The run token and socket name uatu put in the launch intent; null when it did not launch the app. */
data class LaunchExtras(val token: String, val socket: String?) {
    companion object {
        fun of(intent: Intent?): LaunchExtras? {
            val token = intent?.getStringExtra(AndroidGlue.EXTRA_TOKEN)?.takeIf { it.isNotEmpty() } ?: return null
            return LaunchExtras(token, intent.getStringExtra(AndroidGlue.EXTRA_SOCKET)?.takeIf { it.isNotEmpty() })
        }
    }
}

/** ActivityLifecycleCallbacks with nothing to do by default. */
abstract class LifecycleAdapter : Application.ActivityLifecycleCallbacks {
    override fun onActivityCreated(activity: Activity, savedInstanceState: Bundle?) {}
    override fun onActivityStarted(activity: Activity) {}
    override fun onActivityResumed(activity: Activity) {}
    override fun onActivityPaused(activity: Activity) {}
    override fun onActivityStopped(activity: Activity) {}
    override fun onActivitySaveInstanceState(activity: Activity, outState: Bundle) {}
    override fun onActivityDestroyed(activity: Activity) {}
}
