package dev.uatu.sdk

import android.app.Application
import dev.uatu.sdk.android.AndroidGlue
import dev.uatu.sdk.core.Agent

/**
 * The uatu SDK as an app uses it: three calls.
 *
 * ```kotlin
 * class FolioApp : Application() {
 *     override fun onCreate() {
 *         super.onCreate()
 *         Uatu.start(this)
 *         Uatu.extract("route") { navigator.currentRoute }
 *         Uatu.extract("balance") { ledger.total }
 *     }
 * }
 * ```
 *
 * In a release build (not debuggable), and whenever the app was not launched by
 * uatu (no run token in the launch intent), [start] does nothing and no thread
 * is started; [extract] only remembers a lambda.
 */
object Uatu {
    /** The platform-free SDK; the Android glue feeds it. */
    internal val agent = Agent()

    /** Connects to the uatu host when the app was launched by it; call from `Application.onCreate`. */
    @JvmStatic
    fun start(application: Application) = AndroidGlue.start(application, agent)

    /** Registers a value the host reads at each pause, on the main thread; it must turn into JSON. */
    @JvmStatic
    fun extract(name: String, extractor: () -> Any?) = agent.extract(name, extractor)

    /** An exception the app handled but wants the host to see. */
    @JvmStatic
    fun reportError(throwable: Throwable) = agent.reportError(throwable)
}
