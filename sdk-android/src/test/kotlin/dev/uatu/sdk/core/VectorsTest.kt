package dev.uatu.sdk.core

import java.io.ByteArrayInputStream
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.name
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * Every vector of `proto/vectors/` (the files the host's `device_vectors.rs`
 * reads, not copies) decoded with this SDK's codec and compared with its
 * expected result; every valid message re-encoded and decoded again.
 */
class VectorsTest {
    private val dir: Path = Path.of(System.getProperty("uatu.vectors.dir", "../proto/vectors")).toAbsolutePath().normalize()
    private val manifest = Json.parseToJsonElement(Files.readString(dir.resolve("vectors.json"))).jsonObject
    private val vectors = manifest.getValue("vectors").jsonArray.map { it.jsonObject }

    private fun decode(bytes: ByteArray): Message {
        val input = ByteArrayInputStream(bytes)
        val message = Frames.read(input)
        assertEquals(0, input.available(), "bytes left after one frame")
        return message
    }

    /** What the listener's handshake makes of a HELLO (§4.2 and §1's token). */
    private fun handshake(hello: Message.Hello, listenerToken: String?): String = when {
        hello.protocolVersion != PROTOCOL_VERSION -> "version_mismatch"
        listenerToken != null && hello.token == null -> "token_missing"
        listenerToken != null && hello.token != listenerToken -> "token_mismatch"
        else -> "accepted"
    }

    @Test
    fun `the manifest is of this protocol version and frame limit`() {
        assertEquals(PROTOCOL_VERSION, manifest.getValue("protocol_version").jsonPrimitive.long)
        assertEquals(MAX_FRAME_BYTES.toLong(), manifest.getValue("max_frame_bytes").jsonPrimitive.long)
    }

    @Test
    fun `every vector decodes as expected and valid messages survive a round trip`() {
        val failures = mutableListOf<String>()
        for (vector in vectors) {
            val file = vector.getValue("file").jsonPrimitive.content
            val bytes = Files.readAllBytes(dir.resolve(file))
            val expected = vector.getValue("expected").jsonObject
            val outcome = runCatching { decode(bytes) }
            val ok = expected["ok"]
            val error = expected["error"]?.jsonPrimitive?.content
            val message = outcome.getOrNull()
            when {
                ok != null && message != null -> {
                    if (message.toJson() != ok) failures += "$file: decoded ${message.toJson()}, expected $ok"
                    val again = decode(Frames.encode(message))
                    if (again != message) failures += "$file: re-encoded and decoded as $again"
                    val wantHandshake = expected["handshake"]?.jsonPrimitive?.content
                    val gotHandshake = (message as? Message.Hello)?.let {
                        handshake(it, vector["listener_token"]?.jsonPrimitive?.content)
                    }
                    if (gotHandshake != wantHandshake) failures += "$file: handshake $gotHandshake, expected $wantHandshake"
                }
                error != null && message == null -> {
                    val kind = (outcome.exceptionOrNull() as? FrameException)?.kind?.wireName
                    if (kind != error) failures += "$file: failed with $kind (${outcome.exceptionOrNull()}), expected $error"
                }
                error != null -> failures += "$file: decoded $message, expected error $error"
                else -> failures += "$file: expected a message, got ${outcome.exceptionOrNull()}"
            }
        }
        assertTrue(failures.isEmpty(), "${failures.size} vectors failed:\n" + failures.joinToString("\n"))
    }

    @Test
    fun `the manifest lists every vector file and covers every message type and error`() {
        val listed = vectors.map { it.getValue("file").jsonPrimitive.content }.toSet()
        val onDisk = Files.list(dir).use { files -> files.map { it.name }.filter { it.endsWith(".bin") }.toList().toSet() }
        assertEquals(onDisk, listed, "vector files and manifest disagree")
        val types = vectors.mapNotNull { (it.getValue("expected").jsonObject["ok"] as? JsonObject)?.get("type")?.jsonPrimitive?.content }.toSet()
        assertEquals(setOf("HELLO", "PAUSE", "STATE", "RESUME", "GOODBYE"), types)
        val errors = vectors.mapNotNull { it.getValue("expected").jsonObject["error"]?.jsonPrimitive?.content }.toSet()
        assertEquals(FrameException.Kind.entries.map { it.wireName }.toSet(), errors)
        val handshakes = vectors.mapNotNull { it.getValue("expected").jsonObject["handshake"]?.jsonPrimitive?.content }.toSet()
        assertEquals(setOf("accepted", "version_mismatch", "token_missing", "token_mismatch"), handshakes)
    }
}
