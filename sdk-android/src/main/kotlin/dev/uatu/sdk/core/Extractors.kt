package dev.uatu.sdk.core

import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject

/** The snapshot values read at one safe point, and what went wrong reading them. */
class Snapshot(val values: JsonObject, val exceptions: List<ExceptionInfo>, val logs: List<LogEntry>)

/**
 * The values an app registers with `Uatu.extract(name) { value }`. Each is read
 * on the main thread at the safe point of a PAUSE. An extractor that throws or
 * returns something without a JSON form never takes the app down: the first is
 * reported as an exception of the STATE, the second as an error log line, and
 * either way the name is left out of that STATE's snapshots.
 */
class Extractors {
    private val registered = LinkedHashMap<String, () -> Any?>()

    /** Registers (or replaces) the extractor of [name]. */
    fun register(name: String, extractor: () -> Any?) {
        synchronized(registered) { registered[name] = extractor }
    }

    fun unregister(name: String) {
        synchronized(registered) { registered.remove(name) }
    }

    val size: Int get() = synchronized(registered) { registered.size }

    fun read(now: Long): Snapshot {
        val extractors = synchronized(registered) { registered.toList() }
        val values = LinkedHashMap<String, JsonElement>(extractors.size)
        val exceptions = mutableListOf<ExceptionInfo>()
        val logs = mutableListOf<LogEntry>()
        for ((name, extractor) in extractors) {
            val value = try {
                extractor()
            } catch (e: Throwable) {
                if (e is VirtualMachineError) throw e
                val info = ExceptionInfo.of(e, now)
                exceptions += info.copy(message = "in uatu extractor \"$name\": ${info.message}")
                continue
            }
            try {
                values[name] = JsonValues.toJson(value)
            } catch (e: UnserialisableValueException) {
                logs += LogEntry(now, LogLevel.ERROR, SDK_LOG_TAG, "uatu extractor \"$name\" returned a value that cannot be serialised to JSON ${e.message}")
            } catch (e: StackOverflowError) {
                logs += LogEntry(now, LogLevel.ERROR, SDK_LOG_TAG, "uatu extractor \"$name\" returned a value nested too deeply to serialise")
            }
        }
        return Snapshot(JsonObject(values), exceptions, logs)
    }
}

/** The tag of the log lines the SDK writes about itself. */
const val SDK_LOG_TAG = "uatu"
