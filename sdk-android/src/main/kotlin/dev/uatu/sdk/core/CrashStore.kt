package dev.uatu.sdk.core

import java.io.File
import java.io.IOException
import java.nio.file.AtomicMoveNotSupportedException
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import kotlinx.serialization.SerializationException
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray

/**
 * Uncaught exceptions that must survive the process (`proto/agent.md` §5): saved
 * by the dying process, delivered by the first STATE of the next one, then
 * deleted. One JSON array of Exception objects, replaced atomically so a crash
 * in the middle of a save never leaves half a file.
 */
class CrashStore(val file: File) {
    fun load(): List<ExceptionInfo> {
        if (!file.exists()) return emptyList()
        return try {
            val array = Json.parseToJsonElement(file.readText()) as? JsonArray ?: return emptyList()
            array.mapIndexed { i, element -> ExceptionInfo.parse(element, "${file.name}[$i]") }
        } catch (e: IOException) {
            emptyList()
        } catch (e: SerializationException) {
            emptyList() // not ours or damaged: nothing to deliver
        }
    }

    /** Adds [exception] to the ones not yet delivered. */
    fun save(exception: ExceptionInfo) = write(load() + exception)

    fun clear() {
        file.delete()
    }

    private fun write(exceptions: List<ExceptionInfo>) {
        file.parentFile?.mkdirs()
        val temporary = File(file.parentFile, "${file.name}.tmp")
        temporary.writeText(JsonArray(exceptions.map { it.toJson() }).toString())
        try {
            Files.move(temporary.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
        } catch (e: AtomicMoveNotSupportedException) {
            Files.move(temporary.toPath(), file.toPath(), StandardCopyOption.REPLACE_EXISTING)
        }
    }
}
