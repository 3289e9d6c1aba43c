package dev.uatu.sdk.android

import android.app.Activity
import android.os.Bundle
import android.os.Looper
import android.view.ViewGroup
import android.widget.Button
import android.widget.LinearLayout
import android.widget.TextView
import java.time.Duration
import org.junit.Assert.assertEquals
import org.junit.Test
import org.junit.runner.RunWith
import org.robolectric.Robolectric
import org.robolectric.RobolectricTestRunner
import org.robolectric.RuntimeEnvironment
import org.robolectric.Shadows.shadowOf
import org.robolectric.annotation.Config

/**
 * Capture time of a 300-view layout's hierarchy under Robolectric. A benchmark,
 * not part of `mvn verify` (surefire's default includes skip `*Bench`):
 * `mvn -B -q test -f sdk-android/pom.xml -Dtest=HierarchyBench -Dsurefire.failIfNoSpecifiedTests=false`.
 */
@RunWith(RobolectricTestRunner::class)
@Config(sdk = [34], application = DebugApp::class)
class HierarchyBench {
    class ThreeHundredViews : Activity() {
        override fun onCreate(savedInstanceState: Bundle?) {
            setTheme(android.R.style.Theme_DeviceDefault_NoActionBar)
            super.onCreate(savedInstanceState)
            val list = LinearLayout(this).apply { orientation = LinearLayout.VERTICAL }
            repeat(ROWS) { row ->
                val line = LinearLayout(this).apply {
                    orientation = LinearLayout.HORIZONTAL
                    isBaselineAligned = false // else the text drops below its 4 px row and is clipped away
                }
                line.addView(TextView(this).apply { text = "row $row" }, LinearLayout.LayoutParams(150, 4))
                line.addView(Button(this).apply { text = "go"; contentDescription = "go_$row" }, LinearLayout.LayoutParams(150, 4))
                list.addView(line, LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, 4))
            }
            setContentView(list)
        }
    }

    @Test
    fun `capture a 300-view layout`() {
        val activity = Robolectric.buildActivity(ThreeHundredViews::class.java).setup().get()
        shadowOf(Looper.getMainLooper()).idleFor(Duration.ofMillis(50))
        val source = ViewHierarchySource(RuntimeEnvironment.getApplication(), ActivityWindows().also { it.onActivityStarted(activity) })
        val nodes = (source.capture() ?: error("no hierarchy")).nodes().count()
        assertEquals("the layout's views, the decor's and the screen root", 1 + 3 * ROWS + 1 + DECOR_NODES, nodes)
        repeat(200) { source.capture() }
        val samples = LongArray(1_000) {
            val start = System.nanoTime()
            source.capture()
            System.nanoTime() - start
        }.sorted()
        fun percentile(p: Double) = samples[((samples.size - 1) * p).toInt()] / 1_000.0
        println("hierarchy of ${3 * ROWS + 1} views ($nodes nodes) under Robolectric, 1000 captures (µs): " +
            "p50 %.0f  p90 %.0f  p99 %.0f".format(percentile(0.5), percentile(0.9), percentile(0.99)))
    }

    private companion object {
        const val ROWS = 100

        /** DecorView, its LinearLayout, the content FrameLayout. */
        const val DECOR_NODES = 3
    }
}
