package dev.uatu.sdk.core

import java.io.EOFException
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/** Why a frame could not be read; [kind] is the error name of `proto/agent.md` §6. */
class FrameException(val kind: Kind, message: String, cause: Throwable? = null) : IOException(message, cause) {
    enum class Kind(val wireName: String) {
        CLOSED("closed"),
        TRUNCATED("truncated"),
        OVERSIZE("oversize"),
        BAD_JSON("bad_json"),
        UNKNOWN_TYPE("unknown_type"),
        INVALID_MESSAGE("invalid_message"),
    }
}

/** The frames of `proto/agent.md` §2: a 4-byte big-endian length, then one JSON object. */
object Frames {
    private val json = Json // strict: no comments, no unquoted keys, no trailing commas

    fun encode(message: Message): ByteArray {
        val payload = message.toJson().toString().toByteArray(Charsets.UTF_8)
        if (payload.size > MAX_FRAME_BYTES) {
            throw FrameException(FrameException.Kind.OVERSIZE, "a ${message.typeName} of ${payload.size} bytes exceeds the $MAX_FRAME_BYTES-byte frame limit")
        }
        return ByteBuffer.allocate(4 + payload.size).putInt(payload.size).put(payload).array()
    }

    fun write(output: OutputStream, message: Message) {
        output.write(encode(message))
        output.flush()
    }

    /** Reads one frame; an oversize length is refused before any payload byte is read. */
    fun read(input: InputStream): Message {
        val prefix = ByteArray(4)
        val gotPrefix = readUpTo(input, prefix)
        if (gotPrefix == 0) throw FrameException(FrameException.Kind.CLOSED, "connection closed")
        if (gotPrefix < 4) throw FrameException(FrameException.Kind.TRUNCATED, "connection closed after $gotPrefix of 4 length bytes")
        val size = ByteBuffer.wrap(prefix).int.toLong() and 0xFFFF_FFFFL
        if (size > MAX_FRAME_BYTES) {
            throw FrameException(FrameException.Kind.OVERSIZE, "frame of $size bytes exceeds the $MAX_FRAME_BYTES-byte limit")
        }
        val payload = ByteArray(size.toInt())
        val got = readUpTo(input, payload)
        if (got < payload.size) {
            throw FrameException(FrameException.Kind.TRUNCATED, "connection closed after $got of ${payload.size} bytes of a frame")
        }
        return decodePayload(payload)
    }

    /** Decodes a payload (the bytes after the length prefix). */
    fun decodePayload(payload: ByteArray): Message {
        val text = try {
            Charsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(payload))
                .toString()
        } catch (e: CharacterCodingException) {
            throw FrameException(FrameException.Kind.BAD_JSON, "frame is not valid UTF-8", e)
        }
        val element = try {
            json.parseToJsonElement(text)
        } catch (e: SerializationException) {
            throw FrameException(FrameException.Kind.BAD_JSON, "frame is not valid JSON: ${e.message}", e)
        }
        if (element !is JsonObject) {
            throw FrameException(FrameException.Kind.INVALID_MESSAGE, "a message must be a JSON object, not ${element.kind()}")
        }
        return MessageDecoder.decode(element)
    }

    private fun readUpTo(input: InputStream, buffer: ByteArray): Int {
        var filled = 0
        while (filled < buffer.size) {
            val n = try {
                input.read(buffer, filled, buffer.size - filled)
            } catch (e: EOFException) {
                -1
            }
            if (n < 0) break
            filled += n
        }
        return filled
    }
}

/** Turns a payload object into a [Message], refusing what §3 does not allow. */
internal object MessageDecoder {
    private val TYPES = setOf("HELLO", "PAUSE", "STATE", "RESUME", "GOODBYE")

    fun decode(obj: JsonObject): Message {
        val type = (obj["type"] as? JsonPrimitive)?.takeIf { it.isString }?.content
        if (type == null || type !in TYPES) {
            val shown = obj["type"]?.toString() ?: "no type"
            throw FrameException(FrameException.Kind.UNKNOWN_TYPE, "frame is not a known message: $shown")
        }
        val fields = Fields(type, obj)
        val message = when (type) {
            "HELLO" -> Message.Hello(
                protocolVersion = fields.unsigned("protocol_version"),
                sdkVersion = fields.string("sdk_version"),
                platform = fields.string("platform"),
                appId = fields.string("app_id"),
                token = fields.optional("token") { string(it) },
                capabilities = fields.optional("capabilities") { strings(it) } ?: emptyList(),
            )
            "PAUSE" -> Message.Pause(
                id = fields.unsigned("id"),
                hierarchy = fields.optional("hierarchy") { boolean(it) } ?: false,
            )
            "STATE" -> Message.State(
                id = fields.unsigned("id"),
                snapshots = fields.optional("snapshots") { obj(it) } ?: JsonObject(emptyMap()),
                exceptions = fields.optional("exceptions") { list(it, "exceptions", ::exception) } ?: emptyList(),
                logs = fields.optional("logs") { list(it, "logs", ::logEntry) } ?: emptyList(),
                coverage = fields.optional("coverage") { strings(it) },
                hierarchy = fields.optional("hierarchy") { Hierarchy.parse(it, "STATE.hierarchy") },
            )
            "RESUME" -> Message.Resume(fields.unsigned("id"))
            else -> Message.Goodbye(fields.string("reason"))
        }
        fields.refuseUnknown()
        return message
    }

    private fun exception(element: JsonElement, where: String) = ExceptionInfo.parse(element, where)

    private fun logEntry(element: JsonElement, where: String): LogEntry {
        val fields = Fields(where, element as? JsonObject ?: invalid("$where must be an object"))
        val level = fields.string("level")
        return LogEntry(
            time = fields.unsigned("time"),
            level = LogLevel.fromWire(level) ?: invalid("$where.level \"$level\" is not a log level"),
            tag = fields.optional("tag") { string(it) } ?: "",
            message = fields.string("message"),
        ).also { fields.refuseUnknown() }
    }
}

internal fun invalid(message: String): Nothing =
    throw FrameException(FrameException.Kind.INVALID_MESSAGE, "frame is not a valid message: $message")

/** Reads the fields of one JSON object, remembering which were read so the rest can be refused. */
internal class Fields(private val where: String, private val obj: JsonObject) {
    private val seen = mutableSetOf("type")

    fun required(name: String): JsonElement {
        seen += name
        return obj[name] ?: invalid("$where is missing its field \"$name\"")
    }

    fun <T> optional(name: String, read: Fields.(JsonElement) -> T): T? {
        seen += name
        val element = obj[name] ?: return null
        return read(element)
    }

    fun string(name: String): String = string(required(name), name)
    fun unsigned(name: String): Long = unsigned(required(name), name)
    fun boolean(name: String): Boolean = boolean(required(name), name)
    fun obj(name: String): JsonObject = obj(required(name), name)

    /** A signed 32-bit integer (driver.proto's `int32` bounds). */
    fun int(name: String): Int {
        val element = required(name)
        return (element as? JsonPrimitive)?.takeIf { !it.isString }?.content?.toIntOrNull()
            ?: invalid("$where.$name must be a 32-bit integer, not ${element.kind()}")
    }

    fun string(element: JsonElement, name: String = "value"): String =
        (element as? JsonPrimitive)?.takeIf { it.isString }?.content ?: invalid("$where.$name must be a string, not ${element.kind()}")

    fun boolean(element: JsonElement, name: String = "value"): Boolean =
        (element as? JsonPrimitive)?.takeIf { !it.isString && (it.content == "true" || it.content == "false") }
            ?.content?.toBooleanStrict() ?: invalid("$where.$name must be a boolean, not ${element.kind()}")

    /** An unsigned integer below 2^53 (`proto/agent.md` §3). */
    fun unsigned(element: JsonElement, name: String = "value"): Long {
        val primitive = element as? JsonPrimitive
        val value = primitive?.takeIf { !it.isString && it != JsonNull }?.content?.toLongOrNull()
        return value?.takeIf { it in 0 until (1L shl 53) }
            ?: invalid("$where.$name must be an unsigned integer below 2^53, not ${primitive?.content ?: element.kind()}")
    }

    fun obj(element: JsonElement, name: String = "value"): JsonObject =
        element as? JsonObject ?: invalid("$where.$name must be an object, not ${element.kind()}")

    fun array(element: JsonElement, name: String = "value"): JsonArray =
        element as? JsonArray ?: invalid("$where.$name must be an array, not ${element.kind()}")

    fun strings(element: JsonElement): List<String> = array(element).mapIndexed { i, item -> string(item, "[$i]") }

    fun <T> list(element: JsonElement, name: String, read: (JsonElement, String) -> T): List<T> =
        array(element, name).mapIndexed { i, item -> read(item, "$where.$name[$i]") }

    /** Unknown fields are errors (§3). */
    fun refuseUnknown() {
        val unknown = obj.keys - seen
        if (unknown.isNotEmpty()) invalid("$where has unknown field(s) ${unknown.joinToString { "\"$it\"" }}")
    }
}
