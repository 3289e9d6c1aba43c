package dev.uatu.sdk.bench

import dev.uatu.sdk.core.Message
import dev.uatu.sdk.core.TestHost
import dev.uatu.sdk.harness.HarnessApp
import dev.uatu.sdk.harness.HarnessMain
import java.lang.management.ManagementFactory
import java.nio.file.Files
import kotlin.system.exitProcess

/**
 * PAUSE → STATE round trip of the JVM harness (20 extractors, the SDK's core
 * over a real Unix socket, its main loop ticking), timed on the host side of the
 * socket; then the SDK's idle memory. Not a test: a figure for docs/benchmarks.md
 * (the command is there). Arguments: [cycles] [warm-up cycles].
 */
object RoundTripBench {
    @JvmStatic
    fun main(args: Array<String>) {
        val cycles = args.getOrNull(0)?.toInt() ?: 10_000
        val warmUp = args.getOrNull(1)?.toInt() ?: 2_000
        val dir = Files.createTempDirectory("uatu-bench")
        val socket = dir.resolve("agent.sock")
        val host = TestHost(socket)
        val options = HarnessMain.parse(arrayOf("--socket", socket.toString(), "--extractors", "20"))
        val app = HarnessApp(options)

        val heapBefore = usedHeapAfterGc()
        app.start()
        val side = host.accept()
        side.expect<Message.Hello>()

        var id = 0L
        fun roundTrip(): Long {
            id++
            val start = System.nanoTime()
            side.send(Message.Pause(id))
            val state = side.expect<Message.State>()
            val elapsed = System.nanoTime() - start
            check(state.id == id && state.snapshots.size == 20) { "unexpected STATE $state" }
            side.send(Message.Resume(id))
            return elapsed
        }
        repeat(warmUp) { roundTrip() }
        val samples = LongArray(cycles) { roundTrip() }.sorted()
        fun percentile(p: Double) = samples[((samples.size - 1) * p).toInt()] / 1_000.0
        println("PAUSE->STATE round trip, 20 extractors, $cycles cycles after $warmUp warm-up (µs): " +
            "p50 %.1f  p90 %.1f  p99 %.1f  max %.1f".format(percentile(0.5), percentile(0.9), percentile(0.99), percentile(1.0)))

        // Idle: connected, no pause in flight.
        Thread.sleep(500)
        val heapIdle = usedHeapAfterGc()
        val sdkThreads = Thread.getAllStackTraces().keys.count { it.name == "uatu-agent" }
        println("SDK idle: heap %.1f KiB above the app without it (after GC; includes the test host's side of the socket), %d SDK thread(s)".format(
            (heapIdle - heapBefore) / 1024.0, sdkThreads))
        app.agent.stop()
        host.close()
        dir.toFile().deleteRecursively()
        exitProcess(0)
    }

    private fun usedHeapAfterGc(): Long {
        val memory = ManagementFactory.getMemoryMXBean()
        repeat(5) {
            System.gc()
            Thread.sleep(50)
        }
        return memory.heapMemoryUsage.used
    }
}
