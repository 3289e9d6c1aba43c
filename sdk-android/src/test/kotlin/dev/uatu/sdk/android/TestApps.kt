package dev.uatu.sdk.android

import android.app.Activity
import android.app.Application
import android.content.pm.ApplicationInfo
import android.os.Bundle
import android.widget.TextView
import dev.uatu.sdk.Uatu

/**
 * A real Application of a debug build that starts the SDK the documented way.
 * (A debug build's manifest makes the app debuggable; Robolectric runs without
 * one here, so the app sets the flag the manifest would have.)
 */
class DebugApp : Application() {
    override fun onCreate() {
        applicationInfo.flags = applicationInfo.flags or ApplicationInfo.FLAG_DEBUGGABLE
        super.onCreate()
        Uatu.start(this)
        Uatu.extract("app") { "DebugApp" }
    }
}

/** The same app in a release build: not debuggable. */
class ReleaseApp : Application() {
    override fun onCreate() {
        super.onCreate()
        Uatu.start(this)
        Uatu.extract("app") { "ReleaseApp" }
    }
}

class PlainActivity : Activity() {
    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        setContentView(TextView(this).apply { text = "hello" })
    }
}
