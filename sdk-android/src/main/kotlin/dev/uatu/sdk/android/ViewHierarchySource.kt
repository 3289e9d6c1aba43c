package dev.uatu.sdk.android

import android.app.Application
import android.content.res.Resources
import android.graphics.Rect
import android.os.Build
import android.view.View
import android.view.ViewGroup
import android.view.WindowManager
import android.view.accessibility.AccessibilityNodeInfo
import android.view.accessibility.AccessibilityNodeProvider
import android.widget.Checkable
import android.widget.TextView
import dev.uatu.sdk.core.Bounds
import dev.uatu.sdk.core.Hierarchy
import dev.uatu.sdk.core.HierarchySource
import dev.uatu.sdk.core.Node

/**
 * The app's own windows as driver.proto's hierarchy, read on the main thread
 * at a pause: what `uiautomator dump` reports for the app, without leaving the
 * process. Each shown View becomes a node with its visible bounds on screen
 * (clipped by its parents, as the accessibility service reports them); views
 * that are not VISIBLE, or clipped away entirely, are left out with their
 * subtrees. It cannot see system windows (the status bar, permission dialogs,
 * other apps): for those the host falls back to the sidecar's dump.
 *
 * Content drawn without Views (Jetpack Compose, a WebView's page, custom
 * widgets) is read through the View's [AccessibilityNodeProvider], as the
 * accessibility service reads it: its virtual nodes become children of the View.
 * When nothing in the app's windows can be read (one opaque view: a game, Flutter,
 * Compose without semantics), there is no hierarchy, and the host uses the dump.
 */
class ViewHierarchySource(private val application: Application, private val activities: ActivityWindows) : HierarchySource {
    override fun capture(): Hierarchy? {
        val screen = screenBounds()
        val windows = rootViews().mapNotNull { node(it, screen) }
        if (windows.none { window -> window.descendants().any(::isReadable) }) return null
        val root = Node(
            className = "",
            packageName = application.packageName,
            enabled = true,
            bounds = Bounds(screen.left, screen.top, screen.right, screen.bottom),
            children = windows,
        )
        return Hierarchy(root, screen.width(), screen.height())
    }

    /** Every window's root view, bottom to top; the started activities' when the window list is out of reach. */
    fun rootViews(): List<View> {
        val global = windowManagerViews()
        val views = global ?: activities.activities.map { it.window.decorView }
        val shown = views.filter { it.isAttachedToWindow && it.isShown }
        // Windows hidden by the window manager (a stopped activity's) are left out, unless it
        // reports none visible at all, as during a transition or under Robolectric, which never
        // sets window visibility: then every attached window is reported.
        return shown.filter { it.windowVisibility == View.VISIBLE }.ifEmpty { shown }
    }

    @Suppress("DiscouragedPrivateApi", "PrivateApi")
    private fun windowManagerViews(): List<View>? = try {
        // The list Espresso's RootsOracle reads too: every window this process added, dialogs included.
        val globalClass = Class.forName("android.view.WindowManagerGlobal")
        val global = globalClass.getMethod("getInstance").invoke(null)
        val field = globalClass.getDeclaredField("mViews").apply { isAccessible = true }
        @Suppress("UNCHECKED_CAST")
        (field.get(global) as List<View>).toList()
    } catch (e: ReflectiveOperationException) {
        null
    } catch (e: RuntimeException) {
        null
    }

    private fun screenBounds(): Rect {
        val windowManager = application.getSystemService(WindowManager::class.java)
        return if (Build.VERSION.SDK_INT >= 30 && windowManager != null) {
            Rect(windowManager.maximumWindowMetrics.bounds)
        } else {
            val metrics = application.resources.displayMetrics
            Rect(0, 0, metrics.widthPixels, metrics.heightPixels)
        }
    }

    private val location = IntArray(2)

    private fun node(view: View, clip: Rect): Node? {
        if (view.visibility != View.VISIBLE) return null
        view.getLocationOnScreen(location)
        val bounds = Rect(location[0], location[1], location[0] + view.width, location[1] + view.height)
        if (!bounds.intersect(clip)) return null
        val views = if (view is ViewGroup) {
            (0 until view.childCount).mapNotNull { node(view.getChildAt(it), bounds) }
        } else {
            emptyList()
        }
        val children = views + (view.accessibilityNodeProvider?.let { virtualChildren(it, bounds) } ?: emptyList())
        val info = view.createAccessibilityNodeInfo()
        try {
            return Node(
                resourceId = resourceName(view),
                text = (view as? TextView)?.text?.toString() ?: info.text?.toString().orEmpty(),
                contentDescription = view.contentDescription?.toString() ?: info.contentDescription?.toString().orEmpty(),
                className = view.accessibilityClassName?.toString() ?: view.javaClass.name,
                packageName = application.packageName,
                clickable = view.isClickable,
                enabled = view.isEnabled,
                checked = (view as? Checkable)?.isChecked ?: info.isChecked,
                focused = view.isFocused,
                selected = view.isSelected,
                scrollable = info.isScrollable,
                bounds = Bounds(bounds.left, bounds.top, bounds.right, bounds.bottom),
                children = children,
                role = roleOf(info),
                attributes = attributesOf(info, (view as? TextView)?.hint?.toString()),
            )
        } finally {
            @Suppress("DEPRECATION")
            info.recycle()
        }
    }

    /** The virtual nodes under a View's provider: its host node's children, and theirs. */
    private fun virtualChildren(provider: AccessibilityNodeProvider, clip: Rect): List<Node> {
        val host = provider.createAccessibilityNodeInfo(AccessibilityNodeProvider.HOST_VIEW_ID) ?: return emptyList()
        return virtualChildrenOf(provider, host, clip, depth = 0, visited = HashSet())
    }

    private fun virtualChildrenOf(
        provider: AccessibilityNodeProvider,
        parent: AccessibilityNodeInfo,
        clip: Rect,
        depth: Int,
        visited: MutableSet<Int>,
    ): List<Node> {
        if (depth >= MAX_VIRTUAL_DEPTH) return emptyList()
        return (0 until parent.childCount).mapNotNull { index ->
            val id = virtualChildId(parent, index) ?: return@mapNotNull null
            if (!visited.add(id)) return@mapNotNull null // a provider that loops
            val info = provider.createAccessibilityNodeInfo(id) ?: return@mapNotNull null
            if (!info.isVisibleToUser) return@mapNotNull null
            val bounds = Rect().also(info::getBoundsInScreen)
            if (!bounds.intersect(clip)) return@mapNotNull null
            Node(
                resourceId = info.viewIdResourceName.orEmpty(),
                text = info.text?.toString().orEmpty(),
                contentDescription = info.contentDescription?.toString().orEmpty(),
                className = info.className?.toString().orEmpty(),
                packageName = application.packageName,
                clickable = info.isClickable,
                enabled = info.isEnabled,
                checked = info.isChecked,
                focused = info.isFocused,
                selected = info.isSelected,
                scrollable = info.isScrollable,
                bounds = Bounds(bounds.left, bounds.top, bounds.right, bounds.bottom),
                children = virtualChildrenOf(provider, info, bounds, depth + 1, visited),
                role = roleOf(info),
                attributes = attributesOf(info, info.hintText?.toString()),
            )
        }
    }

    /**
     * The virtual id of a provider-made node's child. The framework keeps it as a
     * long whose high half is the virtual id; the getter is not public API, so it is
     * reached by reflection and a platform without it gives no virtual children.
     */
    private fun virtualChildId(parent: AccessibilityNodeInfo, index: Int): Int? = try {
        val childId = getChildId?.invoke(parent, index) as? Long ?: return null
        (childId ushr 32).toInt()
    } catch (e: ReflectiveOperationException) {
        null
    } catch (e: RuntimeException) {
        null
    }

    private val getChildId by lazy {
        try {
            AccessibilityNodeInfo::class.java.getMethod("getChildId", Int::class.javaPrimitiveType)
        } catch (e: ReflectiveOperationException) {
            null
        }
    }

    /** The role description an app or toolkit gave the node (Compose's `Role`, `ViewCompat.setAccessibilityRoleDescription`). */
    private fun roleOf(info: AccessibilityNodeInfo): String =
        info.extras?.getCharSequence(ROLE_DESCRIPTION_EXTRA)?.toString().orEmpty()

    /** What the node info says that no Node field carries, by `uiautomator dump`'s attribute names. */
    private fun attributesOf(info: AccessibilityNodeInfo, hint: String?): Map<String, String> = buildMap {
        put("checkable", info.isCheckable.toString())
        put("focusable", info.isFocusable.toString())
        put("long-clickable", info.isLongClickable.toString())
        put("password", info.isPassword.toString())
        if (!hint.isNullOrEmpty()) put("hint", hint)
    }

    /**
     * Something a spec can find a node by: text, a description, being clickable, or an
     * id of the app's own (the window decor's `android:id/content` and the like say nothing).
     */
    private fun isReadable(node: Node) = node.text.isNotEmpty() || node.contentDescription.isNotEmpty() || node.clickable ||
        (node.resourceId.isNotEmpty() && !node.resourceId.startsWith("android:id/"))

    /** `package:id/name`, as uiautomator writes resource ids; empty for views without one. */
    private fun resourceName(view: View): String {
        if (view.id == View.NO_ID || view.id ushr 24 == 0) return ""
        return try {
            view.resources.getResourceName(view.id)
        } catch (e: Resources.NotFoundException) {
            ""
        }
    }

    private companion object {
        /** Deeper than any real screen; it stops a provider that nests without end. */
        const val MAX_VIRTUAL_DEPTH = 64

        /** Where AndroidX keeps a node's role description (AccessibilityNodeInfoCompat). */
        const val ROLE_DESCRIPTION_EXTRA = "AccessibilityNodeInfo.roleDescription"
    }
}
