package dev.uatu.sidecar

import dev.uatu.sidecar.android.AndroidDriver
import io.grpc.Server
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder
import java.net.InetSocketAddress
import java.util.concurrent.TimeUnit

/** The gRPC server of driver.proto on 127.0.0.1 only (a loopback port, never reachable from the network). */
class SidecarServer(private val driver: AndroidDriver, port: Int) : AutoCloseable {
    private val server: Server = NettyServerBuilder.forAddress(InetSocketAddress("127.0.0.1", port))
        .addService(DriverService(driver))
        .addService(AndroidDeviceService(driver))
        .build()
        .start()

    /** The port listened on: the one asked for, or the free one the system picked for port 0. */
    val port: Int get() = server.port

    /** Stops taking calls, lets running ones finish for a moment, then lets go of the device (and its reverse forward). */
    override fun close() {
        server.shutdown()
        if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
            server.shutdownNow()
            server.awaitTermination(2, TimeUnit.SECONDS)
        }
        driver.close()
    }
}
