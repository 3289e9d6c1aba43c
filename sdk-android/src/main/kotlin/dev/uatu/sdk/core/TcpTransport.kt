package dev.uatu.sdk.core

import java.io.InputStream
import java.io.OutputStream
import java.net.InetSocketAddress
import java.net.Socket

/**
 * The host's loopback TCP port (proto/agent.md §1a): where the Android sidecar's
 * reverse forward leads, and what an app on the same machine as the host (the JVM
 * harness, the sidecar's fake device) connects to. The HELLO must then carry the run token.
 */
class TcpTransport(private val port: Int, private val connectTimeoutMillis: Int = 1_000) : Transport {
    override fun connect(): Connection {
        val socket = Socket()
        try {
            socket.tcpNoDelay = true
            socket.connect(InetSocketAddress("127.0.0.1", port), connectTimeoutMillis)
        } catch (e: Exception) {
            socket.close()
            throw e
        }
        return object : Connection {
            override val input: InputStream = socket.getInputStream()
            override val output: OutputStream = socket.getOutputStream()
            override fun close() = socket.close()
        }
    }
}
