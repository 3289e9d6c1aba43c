package dev.uatu.sdk.android

import android.app.Activity
import android.net.LocalSocket
import android.net.LocalSocketAddress
import android.os.Handler
import android.os.Looper
import android.view.Choreographer
import dev.uatu.sdk.core.Connection
import dev.uatu.sdk.core.SafePoint
import dev.uatu.sdk.core.Transport
import java.io.InputStream
import java.io.OutputStream

/**
 * The safe point of `proto/agent.md` §4.3 on Android: the start of the next
 * frame. The task runs as a Choreographer frame callback on the main looper,
 * between two of its messages, before that frame's input, animation and layout.
 */
class ChoreographerSafePoint(private val main: Handler = Handler(Looper.getMainLooper())) : SafePoint {
    override fun schedule(task: Runnable) {
        // Choreographer.getInstance() belongs to the calling thread's looper: ask for it on the main one.
        main.post { Choreographer.getInstance().postFrameCallback { task.run() } }
    }
}

/** The abstract local socket the sidecar reverse-forwards to the host's loopback port. */
class LocalSocketTransport(private val name: String) : Transport {
    override fun connect(): Connection {
        val socket = LocalSocket()
        try {
            socket.connect(LocalSocketAddress(name, LocalSocketAddress.Namespace.ABSTRACT))
        } catch (e: Exception) {
            socket.close()
            throw e
        }
        return object : Connection {
            override val input: InputStream = socket.inputStream
            override val output: OutputStream = socket.outputStream
            override fun close() = socket.close()
        }
    }
}

/** The app's activities that are started, newest last: the fallback when the window list cannot be read. */
class ActivityWindows : LifecycleAdapter() {
    private val started = ArrayList<Activity>()

    val activities: List<Activity> get() = synchronized(started) { started.toList() }

    override fun onActivityStarted(activity: Activity) {
        synchronized(started) { started += activity }
    }

    override fun onActivityStopped(activity: Activity) {
        synchronized(started) { started -= activity }
    }
}
