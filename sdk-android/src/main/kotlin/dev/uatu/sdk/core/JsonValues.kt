package dev.uatu.sdk.core

import java.math.BigDecimal
import java.math.BigInteger
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/** A value an extractor returned that has no JSON form; [path] says where inside it. */
class UnserialisableValueException(val path: String, message: String) : Exception(message)

/**
 * Converts what an extractor returns to JSON: null, strings and characters,
 * booleans, finite numbers, enums (by name), maps with string keys, iterables,
 * arrays and [JsonElement]s, nested up to [MAX_DEPTH] levels. Anything else is
 * refused with the path of the offending part, rather than guessed at
 * (`toString()` of an arbitrary object is not a state a spec can check).
 */
object JsonValues {
    const val MAX_DEPTH = 64

    fun toJson(value: Any?): JsonElement = convert(value, "$", 0)

    private fun convert(value: Any?, path: String, depth: Int): JsonElement {
        if (depth > MAX_DEPTH) refuse(path, "nested deeper than $MAX_DEPTH levels (a cycle?)")
        return when (value) {
            null -> JsonNull
            is JsonElement -> value
            is String -> JsonPrimitive(value)
            is Char -> JsonPrimitive(value.toString())
            is Boolean -> JsonPrimitive(value)
            is Double -> if (value.isFinite()) JsonPrimitive(value) else refuse(path, "the number $value has no JSON form")
            is Float -> if (value.isFinite()) JsonPrimitive(value) else refuse(path, "the number $value has no JSON form")
            is Int, is Long, is Short, is Byte, is BigInteger, is BigDecimal -> JsonPrimitive(value as Number)
            is Enum<*> -> JsonPrimitive(value.name)
            is Map<*, *> -> JsonObject(
                value.entries.associate { (key, item) ->
                    if (key !is String) refuse(path, "a map key ${describe(key)} is not a string")
                    key to convert(item, "$path.$key", depth + 1)
                },
            )
            is Iterable<*> -> JsonArray(value.mapIndexed { i, item -> convert(item, "$path[$i]", depth + 1) })
            is Array<*> -> JsonArray(value.mapIndexed { i, item -> convert(item, "$path[$i]", depth + 1) })
            is IntArray -> JsonArray(value.map(::JsonPrimitive))
            is LongArray -> JsonArray(value.map(::JsonPrimitive))
            is BooleanArray -> JsonArray(value.map(::JsonPrimitive))
            is DoubleArray -> JsonArray(value.mapIndexed { i, item -> convert(item, "$path[$i]", depth + 1) })
            else -> refuse(path, "${describe(value)} has no JSON form")
        }
    }

    private fun describe(value: Any?) = if (value == null) "null" else "a ${value.javaClass.name}"

    private fun refuse(path: String, why: String): Nothing =
        throw UnserialisableValueException(path, "at $path: $why (supported: null, strings, booleans, finite numbers, enums, maps with string keys, lists, arrays)")
}
