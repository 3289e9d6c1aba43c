package dev.uatu.sdk.core

import java.io.ByteArrayInputStream
import java.nio.file.Files
import java.nio.file.Path
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

/** The SDK's protocol state machine over every case of `proto/agent.md` §4. */
class SessionTest {
    private val vectors = Path.of("../proto/vectors")

    private fun read(file: String): FrameException =
        runCatching { Frames.read(ByteArrayInputStream(Files.readAllBytes(vectors.resolve(file)))) }
            .exceptionOrNull() as FrameException

    @Test
    fun `PAUSE and RESUME become actions and attach the session`() {
        val session = Session()
        assertEquals(Session.Phase.HELLO_SENT, session.phase)
        assertEquals(Session.Action.Pause(7, hierarchy = true), session.onMessage(Message.Pause(7, hierarchy = true)))
        assertEquals(Session.Phase.ATTACHED, session.phase)
        assertEquals(Session.Action.Resume(7), session.onMessage(Message.Resume(7)))
    }

    @Test
    fun `the end of the stream closes without a GOODBYE and reconnects`() {
        for (file in listOf("empty.bin", "truncated_prefix.bin", "truncated_payload.bin")) {
            val session = Session()
            val action = session.onFrameError(read(file)) as Session.Action.Close
            assertNull(action.goodbye, file)
            assertTrue(action.reconnect, file)
            assertEquals(Session.Phase.CLOSED, session.phase)
        }
    }

    @ParameterizedTest
    @EnumSource(value = FrameException.Kind::class, names = ["OVERSIZE", "BAD_JSON", "UNKNOWN_TYPE", "INVALID_MESSAGE"])
    fun `a malformed frame gets a GOODBYE naming the problem, then a reconnection`(kind: FrameException.Kind) {
        val file = mapOf(
            FrameException.Kind.OVERSIZE to "oversize.bin",
            FrameException.Kind.BAD_JSON to "not_utf8.bin",
            FrameException.Kind.UNKNOWN_TYPE to "unknown_type.bin",
            FrameException.Kind.INVALID_MESSAGE to "negative_id.bin",
        ).getValue(kind)
        val error = read(file)
        assertEquals(kind, error.kind)
        val action = Session().onFrameError(error) as Session.Action.Close
        val goodbye = action.goodbye ?: fail("no GOODBYE for $file")
        assertTrue(goodbye.contains(error.message!!), goodbye)
        assertTrue(action.reconnect)
    }

    @Test
    fun `HELLO or STATE from the host is a protocol error`() {
        for (message in listOf(Message.Hello(1, "x", "sim", "a"), Message.State(1))) {
            val action = Session().onMessage(message) as Session.Action.Close
            assertEquals("unexpected ${message.typeName} from the host", action.goodbye)
            assertTrue(action.reconnect)
        }
    }

    @Test
    fun `the host's GOODBYE ends the session, and a refusal for good is not retried`() {
        val busy = Session().onMessage(Message.Goodbye("another app is attached")) as Session.Action.Close
        assertTrue(busy.reconnect)
        assertNull(busy.goodbye, "no GOODBYE answers a GOODBYE")
        for (reason in listOf(
            "protocol version mismatch: the host speaks version 1, the app's SDK speaks version 2",
            "run token missing: this host requires the token it passed to the app at launch",
            "run token mismatch: the app's token is not this run's",
        )) {
            val action = Session().onMessage(Message.Goodbye(reason)) as Session.Action.Close
            assertFalse(action.reconnect, reason)
            assertTrue(reason in action.why)
        }
    }
}
