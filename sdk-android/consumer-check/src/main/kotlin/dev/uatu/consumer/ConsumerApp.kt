package dev.uatu.consumer

import android.app.Application
import dev.uatu.sdk.Uatu
import java.io.IOException

/**
 * An app on Kotlin 1.9 using the SDK the documented way (docs/sdk-android.md):
 * if this compiles, apps on Kotlin 1.9 and newer can read the SDK's metadata.
 */
class ConsumerApp : Application() {
    private var route = "ledger"

    override fun onCreate() {
        super.onCreate()
        Uatu.start(this)
        Uatu.extract("route") { route }
        Uatu.extract("accounts") { listOf(mapOf("id" to 1, "balance" to 1204.5)) }
        try {
            sync()
        } catch (e: IOException) {
            Uatu.reportError(e)
        }
    }

    private fun sync() {
        if (route.isEmpty()) throw IOException("no route")
    }
}
