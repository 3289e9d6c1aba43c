package dev.uatu.sdk.core

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.put

/** The protocol version this SDK speaks (`proto/agent.md` §7). */
const val PROTOCOL_VERSION: Long = 1

/** The largest frame payload either side accepts: 16 MiB. */
const val MAX_FRAME_BYTES: Int = 16 * 1024 * 1024

/** The capability a HELLO advertises when the SDK can answer `PAUSE{hierarchy:true}`. */
const val CAPABILITY_HIERARCHY = "hierarchy"

/** One message of `proto/agent.md` §3; [toJson] gives its payload. */
sealed class Message {
    abstract fun toJson(): JsonObject

    /** The `type` the payload carries. */
    val typeName: String
        get() = when (this) {
            is Hello -> "HELLO"
            is Pause -> "PAUSE"
            is State -> "STATE"
            is Resume -> "RESUME"
            is Goodbye -> "GOODBYE"
        }

    data class Hello(
        val protocolVersion: Long,
        val sdkVersion: String,
        val platform: String,
        val appId: String,
        /** The run token the host handed the app at launch; null when it gave none. */
        val token: String? = null,
        /** What this SDK can do beyond the base protocol, e.g. [CAPABILITY_HIERARCHY]. */
        val capabilities: List<String> = emptyList(),
    ) : Message() {
        override fun toJson() = buildJsonObject {
            put("type", "HELLO")
            put("protocol_version", protocolVersion)
            put("sdk_version", sdkVersion)
            put("platform", platform)
            put("app_id", appId)
            if (token != null) put("token", token)
            if (capabilities.isNotEmpty()) put("capabilities", JsonArray(capabilities.map(::JsonPrimitive)))
        }
    }

    data class Pause(val id: Long, val hierarchy: Boolean = false) : Message() {
        override fun toJson() = buildJsonObject {
            put("type", "PAUSE")
            put("id", id)
            if (hierarchy) put("hierarchy", true)
        }
    }

    data class State(
        val id: Long,
        val snapshots: JsonObject = JsonObject(emptyMap()),
        val exceptions: List<ExceptionInfo> = emptyList(),
        val logs: List<LogEntry> = emptyList(),
        /** Null when this app build has no coverage; empty when no probe was hit. */
        val coverage: List<String>? = null,
        /** The app's windows as driver.proto's `HierarchyResponse` in its JSON mapping; only when asked. */
        val hierarchy: Hierarchy? = null,
    ) : Message() {
        override fun toJson() = buildJsonObject {
            put("type", "STATE")
            put("id", id)
            put("snapshots", snapshots)
            put("exceptions", JsonArray(exceptions.map { it.toJson() }))
            put("logs", JsonArray(logs.map { it.toJson() }))
            if (coverage != null) put("coverage", JsonArray(coverage.map(::JsonPrimitive)))
            if (hierarchy != null) put("hierarchy", hierarchy.toJson())
        }
    }

    data class Resume(val id: Long) : Message() {
        override fun toJson() = buildJsonObject {
            put("type", "RESUME")
            put("id", id)
        }
    }

    data class Goodbye(val reason: String) : Message() {
        override fun toJson() = buildJsonObject {
            put("type", "GOODBYE")
            put("reason", reason)
        }
    }
}

data class ExceptionInfo(val className: String, val message: String, val stack: String, val time: Long) {
    fun toJson() = buildJsonObject {
        put("class", className)
        put("message", message)
        put("stack", stack)
        put("time", time)
    }

    companion object {
        internal fun parse(element: JsonElement, where: String): ExceptionInfo {
            val fields = Fields(where, element as? JsonObject ?: invalid("$where must be an object"))
            return ExceptionInfo(
                className = fields.string("class"),
                message = fields.string("message"),
                stack = fields.optional("stack") { string(it) } ?: "",
                time = fields.unsigned("time"),
            ).also { fields.refuseUnknown() }
        }

        fun of(throwable: Throwable, time: Long) = ExceptionInfo(
            className = throwable.javaClass.name,
            message = throwable.message ?: "",
            stack = throwable.stackTraceToString(),
            time = time,
        )
    }
}

enum class LogLevel(val wireName: String) {
    VERBOSE("verbose"), DEBUG("debug"), INFO("info"), WARN("warn"), ERROR("error"), FATAL("fatal");

    companion object {
        fun fromWire(name: String): LogLevel? = entries.firstOrNull { it.wireName == name }
    }
}

data class LogEntry(val time: Long, val level: LogLevel, val tag: String, val message: String) {
    fun toJson() = buildJsonObject {
        put("time", time)
        put("level", level.wireName)
        put("tag", tag)
        put("message", message)
    }
}

/** A JSON value as the protocol allows it anywhere: here only to name the type in errors. */
internal fun JsonElement.kind(): String = when (this) {
    is JsonObject -> "an object"
    is JsonArray -> "an array"
    is JsonPrimitive -> when {
        isString -> "a string"
        this == kotlinx.serialization.json.JsonNull -> "null"
        content == "true" || content == "false" -> "a boolean"
        else -> "a number"
    }
}
