package dev.uatu.sdk.android

import android.app.Activity
import android.content.Context
import android.graphics.Rect
import android.os.Bundle
import android.view.View
import android.view.ViewGroup
import android.view.accessibility.AccessibilityNodeInfo
import android.view.accessibility.AccessibilityNodeProvider
import android.widget.FrameLayout

/**
 * A View that draws its own keys and describes them through an
 * AccessibilityNodeProvider, as Jetpack Compose and WebView do: no child Views,
 * two virtual buttons, the second holding a virtual label.
 */
class VirtualKeysView(context: Context) : View(context) {
    private class Key(val id: Int, val parent: Int, val label: String, val area: Rect, val children: List<Int>)

    private val keys = listOf(
        Key(1, AccessibilityNodeProvider.HOST_VIEW_ID, "7", Rect(0, 0, 50, 30), emptyList()),
        Key(2, AccessibilityNodeProvider.HOST_VIEW_ID, "8", Rect(50, 0, 100, 30), listOf(3)),
        Key(3, 2, "eight", Rect(55, 5, 95, 25), emptyList()),
    )

    private val provider = object : AccessibilityNodeProvider() {
        override fun createAccessibilityNodeInfo(virtualViewId: Int): AccessibilityNodeInfo? {
            val view = this@VirtualKeysView
            if (virtualViewId == HOST_VIEW_ID) {
                return AccessibilityNodeInfo.obtain(view).also { info ->
                    onInitializeAccessibilityNodeInfo(info)
                    keys.filter { it.parent == HOST_VIEW_ID }.forEach { info.addChild(view, it.id) }
                }
            }
            val key = keys.firstOrNull { it.id == virtualViewId } ?: return null
            val location = IntArray(2).also(::getLocationOnScreen)
            return AccessibilityNodeInfo.obtain(view, key.id).also { info ->
                info.text = key.label
                info.className = "android.widget.Button"
                info.viewIdResourceName = "app.virtual:id/key_${key.label}"
                info.isClickable = key.children.isNotEmpty() || key.parent == HOST_VIEW_ID
                info.isEnabled = true
                info.isVisibleToUser = true
                info.setParent(view, key.parent)
                info.setBoundsInScreen(Rect(key.area).apply { offset(location[0], location[1]) })
                key.children.forEach { info.addChild(view, it) }
            }
        }
    }

    override fun getAccessibilityNodeProvider(): AccessibilityNodeProvider = provider
}

/** A screen whose keys exist only as virtual accessibility nodes. */
class VirtualNodesActivity : Activity() {
    override fun onCreate(savedInstanceState: Bundle?) {
        setTheme(android.R.style.Theme_DeviceDefault_NoActionBar)
        super.onCreate(savedInstanceState)
        setContentView(
            FrameLayout(this).apply {
                setPadding(10, 20, 10, 10)
                addView(VirtualKeysView(this@VirtualNodesActivity), FrameLayout.LayoutParams(100, 30))
            },
        )
    }
}

/** A screen that is one opaque drawing surface, as a game or Flutter app shows it to the View tree. */
class OpaqueActivity : Activity() {
    override fun onCreate(savedInstanceState: Bundle?) {
        setTheme(android.R.style.Theme_DeviceDefault_NoActionBar)
        super.onCreate(savedInstanceState)
        setContentView(View(this), ViewGroup.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.MATCH_PARENT))
    }
}
