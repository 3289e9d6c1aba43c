package dev.uatu.sidecar.bench

import dev.uatu.sidecar.SidecarServer
import dev.uatu.sidecar.adb.DeviceLog
import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.android.AndroidDriver
import dev.uatu.sidecar.android.DriverSettings
import dev.uatu.sidecar.android.UiAutomatorDump
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
import uatu.driver.v1.DriverGrpc
import uatu.driver.v1.DriverOuterClass.HierarchyRequest
import uatu.driver.v1.DriverOuterClass.LaunchRequest
import uatu.driver.v1.DriverOuterClass.LogLevel
import uatu.driver.v1.DriverOuterClass.RecentLogsRequest
import uatu.driver.v1.DriverOuterClass.ScreenshotRequest
import uatu.driver.v1.DriverOuterClass.WaitForIdleRequest
import java.util.concurrent.TimeUnit

/**
 * The sidecar's own cost per step: the four capture calls the host makes each
 * step (WaitForIdle, Hierarchy, Screenshot, RecentLogs) over gRPC on loopback
 * TCP, against the fake device, which answers at once: so the time measured is
 * gRPC, reading the dumps and logcat lines, and parsing a 300-node dump,
 * without the device's own time. The screen changes before every step (as
 * after an input), so each step parses one new dump, WaitForIdle's, which
 * Hierarchy then answers with.
 *
 *     java -cp sidecar-maestro/target/sidecar-maestro.jar dev.uatu.sidecar.bench.StepBenchKt [steps]
 */
fun main(args: Array<String>) {
    val steps = args.firstOrNull()?.toIntOrNull() ?: 2_000
    val warmup = 500
    val device = ScriptedDevice.load("builtin")
    // Screens differing in one row's text: a new screen each step.
    val screens = (0 until 8).map { variant -> benchScreen(rows = 99, variant = variant) }
    val screen = screens.first()
    device.setScreens(listOf(screen))
    device.logs = DeviceLog(benchLogcat(entries = 40), device::uptimeMs)
    val nodes = UiAutomatorDump.parse(screen).nodeCount
    check(nodes == 300) { "the bench screen has $nodes nodes" }

    val driver = AndroidDriver({ device }, DriverSettings())
    SidecarServer(driver, 0).use { server ->
        val channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port).usePlaintext()
            .maxInboundMessageSize(64 * 1024 * 1024).build()
        try {
            val stub = DriverGrpc.newBlockingStub(channel)
            stub.launch(LaunchRequest.newBuilder().setBundleId("app.folio").build())
            val calls = listOf<Pair<String, () -> Unit>>(
                "WaitForIdle" to { check(stub.waitForIdle(WaitForIdleRequest.newBuilder().setTimeoutMs(5_000).build()).idle) },
                "Hierarchy" to { stub.hierarchy(HierarchyRequest.getDefaultInstance()) },
                "Screenshot" to { stub.screenshot(ScreenshotRequest.getDefaultInstance()) },
                "RecentLogs" to { check(stub.recentLogs(RecentLogsRequest.newBuilder().setMinLevel(LogLevel.LOG_LEVEL_INFO).build()).entriesCount > 0) },
            )
            val perCall = calls.associate { it.first to LongArray(steps) }
            val perStep = LongArray(steps)
            for (i in -warmup until steps) {
                device.setScreens(listOf(screens[Math.floorMod(i, screens.size)]))
                val stepStarted = System.nanoTime()
                for ((name, call) in calls) {
                    val started = System.nanoTime()
                    call()
                    if (i >= 0) perCall.getValue(name)[i] = System.nanoTime() - started
                }
                if (i >= 0) perStep[i] = System.nanoTime() - stepStarted
            }
            println("sidecar step overhead, fake device, a new $nodes-node dump each step, $steps steps after $warmup warm-up (ms)")
            println(String.format("%-12s %8s %8s %8s", "", "p50", "p90", "p99"))
            for ((name, times) in perCall + ("step" to perStep)) {
                times.sort()
                fun pct(p: Double) = times[((times.size - 1) * p).toInt()] / 1e6
                println(String.format("%-12s %8.3f %8.3f %8.3f", name, pct(0.50), pct(0.90), pct(0.99)))
            }
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS)
        }
    }
}

/** A screen of `rows` list rows of three nodes each under three containers: 3 + 3 * rows nodes, in the dump format of Android 14. */
fun benchScreen(rows: Int, variant: Int = 0): String {
    fun node(index: Int, cls: String, bounds: String, text: String = "", id: String = "", clickable: Boolean = false, children: String? = null): String {
        val attributes = "index=\"$index\" text=\"$text\" resource-id=\"$id\" class=\"$cls\" package=\"app.folio\" content-desc=\"\" " +
            "checkable=\"false\" checked=\"false\" clickable=\"$clickable\" enabled=\"true\" focusable=\"$clickable\" focused=\"false\" " +
            "scrollable=\"false\" long-clickable=\"false\" password=\"false\" selected=\"false\" bounds=\"$bounds\" drawing-order=\"${index + 1}\" hint=\"\""
        return if (children == null) "<node $attributes />" else "<node $attributes>$children</node>"
    }
    val list = (0 until rows).joinToString("") { i ->
        val top = 320 + i * 24
        node(
            i, "android.view.ViewGroup", "[0,$top][1080,${top + 24}]", id = "app.folio:id/row", clickable = true,
            children = node(0, "android.widget.TextView", "[48,$top][700,${top + 24}]", text = "Payee &amp; memo $i${if (i == variant) " (edited)" else ""}", id = "app.folio:id/name") +
                node(1, "android.widget.TextView", "[700,$top][1032,${top + 24}]", text = "&#163;$i.50", id = "app.folio:id/amount"),
        )
    }
    val root = node(
        0, "android.widget.FrameLayout", "[0,0][1080,2424]",
        children = node(
            0, "android.widget.LinearLayout", "[0,142][1080,2361]",
            children = node(0, "androidx.recyclerview.widget.RecyclerView", "[0,320][1080,2700]", id = "app.folio:id/list", children = list),
        ),
    )
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">$root</hierarchy>"
}

/** `logcat -v monotonic` lines of the app (pid 4242), half of them at INFO or above. */
fun benchLogcat(entries: Int): String = (0 until entries).joinToString("\n", prefix = "--------- beginning of main\n") { i ->
    val level = "DIWE"[i % 4]
    " %d.%03d  4242  4242 %c Folio   : step %d: balance 1204.%02d".format(4836 + i / 10, (i * 37) % 1000, level, i, i % 100)
}
