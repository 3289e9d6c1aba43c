package dev.uatu.sdk.core

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/**
 * The app's windows as `proto/driver.proto` describes a screen: `HierarchyResponse`
 * and `Node` in their protobuf JSON mapping with the proto field names
 * (`proto/agent.md` §3, STATE `hierarchy`). Coordinates are screen pixels;
 * `right` and `bottom` are exclusive.
 */
data class Hierarchy(val root: Node, val screenWidth: Int, val screenHeight: Int) {
    fun toJson() = buildJsonObject {
        put("root", root.toJson())
        put("screen_width", screenWidth)
        put("screen_height", screenHeight)
    }

    /** Every node, parents before children. */
    fun nodes(): Sequence<Node> = root.descendants()

    companion object {
        internal fun parse(element: JsonElement, where: String): Hierarchy {
            val fields = Fields(where, element as? JsonObject ?: invalid("$where must be an object"))
            return Hierarchy(
                root = Node.parse(fields.obj("root"), "$where.root"),
                screenWidth = fields.unsigned("screen_width").toIntOrNull() ?: invalid("$where.screen_width is too large"),
                screenHeight = fields.unsigned("screen_height").toIntOrNull() ?: invalid("$where.screen_height is too large"),
            ).also { fields.refuseUnknown() }
        }
    }
}

data class Bounds(val left: Int, val top: Int, val right: Int, val bottom: Int) {
    fun toJson() = buildJsonObject {
        put("left", left)
        put("top", top)
        put("right", right)
        put("bottom", bottom)
    }
}

data class Node(
    val resourceId: String = "",
    val text: String = "",
    val contentDescription: String = "",
    val className: String = "",
    val packageName: String = "",
    val clickable: Boolean = false,
    val enabled: Boolean = false,
    val checked: Boolean = false,
    val focused: Boolean = false,
    val selected: Boolean = false,
    val scrollable: Boolean = false,
    val bounds: Bounds = Bounds(0, 0, 0, 0),
    val children: List<Node> = emptyList(),
    /** The accessibility role the platform gives it (a role description); empty when none. */
    val role: String = "",
    /** Every other attribute read, by the platform's name (`checkable`, `hint`, …). */
    val attributes: Map<String, String> = emptyMap(),
) {
    fun toJson(): JsonObject = buildJsonObject {
        put("resource_id", resourceId)
        put("text", text)
        put("content_description", contentDescription)
        put("class_name", className)
        put("package", packageName)
        put("clickable", clickable)
        put("enabled", enabled)
        put("checked", checked)
        put("focused", focused)
        put("selected", selected)
        put("scrollable", scrollable)
        put("bounds", bounds.toJson())
        put("children", JsonArray(children.map { it.toJson() }))
        // Optional (added later): written only when there is something to say.
        if (role.isNotEmpty()) put("role", role)
        if (attributes.isNotEmpty()) put("attributes", JsonObject(attributes.mapValues { JsonPrimitive(it.value) }))
    }

    fun descendants(): Sequence<Node> = sequence {
        yield(this@Node)
        for (child in children) yieldAll(child.descendants())
    }

    companion object {
        internal fun parse(element: JsonElement, where: String): Node {
            val fields = Fields(where, element as? JsonObject ?: invalid("$where must be an object"))
            val bounds = Fields("$where.bounds", fields.obj("bounds"))
            return Node(
                resourceId = fields.string("resource_id"),
                text = fields.string("text"),
                contentDescription = fields.string("content_description"),
                className = fields.string("class_name"),
                packageName = fields.string("package"),
                clickable = fields.boolean("clickable"),
                enabled = fields.boolean("enabled"),
                checked = fields.boolean("checked"),
                focused = fields.boolean("focused"),
                selected = fields.boolean("selected"),
                scrollable = fields.boolean("scrollable"),
                bounds = Bounds(bounds.int("left"), bounds.int("top"), bounds.int("right"), bounds.int("bottom"))
                    .also { bounds.refuseUnknown() },
                children = fields.array(fields.required("children"), "children")
                    .mapIndexed { i, child -> parse(child, "$where.children[$i]") },
                role = fields.optional("role") { string(it, "role") }.orEmpty(),
                attributes = fields.optional("attributes") { element ->
                    obj(element, "attributes").mapValues { (name, value) -> string(value, "attributes.$name") }
                }.orEmpty(),
            ).also { fields.refuseUnknown() }
        }
    }
}

private fun Long.toIntOrNull(): Int? = takeIf { it <= Int.MAX_VALUE }?.toInt()
