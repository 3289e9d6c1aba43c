package dev.uatu.sdk.core

/**
 * The SDK's side of one connection (`proto/agent.md` §4), as a pure state
 * machine: it is told what arrived and says what to do. The [Client] does the
 * I/O and the [Pauser] the pausing.
 */
class Session {
    enum class Phase { HELLO_SENT, ATTACHED, CLOSED }

    sealed interface Action {
        data class Pause(val id: Long, val hierarchy: Boolean) : Action
        data class Resume(val id: Long) : Action

        /** Close the connection; say [goodbye] first when it is not null; come back after a pause if [reconnect]. */
        data class Close(val why: String, val goodbye: String?, val reconnect: Boolean) : Action
    }

    var phase = Phase.HELLO_SENT
        private set

    /** A frame arrived from the host. */
    fun onMessage(message: Message): Action {
        check(phase != Phase.CLOSED) { "a closed session receives nothing" }
        return when (message) {
            is Message.Pause -> {
                phase = Phase.ATTACHED
                Action.Pause(message.id, message.hierarchy)
            }
            is Message.Resume -> {
                phase = Phase.ATTACHED
                Action.Resume(message.id)
            }
            is Message.Goodbye -> close(
                "the host said goodbye: ${message.reason}",
                goodbye = null,
                // A host that refused this SDK (its version, its token) would refuse it again.
                reconnect = !isRefusal(message.reason),
            )
            is Message.Hello, is Message.State ->
                close("the host sent ${message.typeName}, which only an app sends", goodbye = "unexpected ${message.typeName} from the host", reconnect = true)
        }
    }

    /** Reading a frame failed. */
    fun onFrameError(error: FrameException): Action = when (error.kind) {
        FrameException.Kind.CLOSED -> close("the host closed the connection", goodbye = null, reconnect = true)
        FrameException.Kind.TRUNCATED -> close("the host closed the connection in the middle of a frame", goodbye = null, reconnect = true)
        else -> close("unreadable frame from the host: ${error.message}", goodbye = "unreadable frame from the host: ${error.message}", reconnect = true)
    }

    private fun close(why: String, goodbye: String?, reconnect: Boolean): Action {
        phase = Phase.CLOSED
        return Action.Close(why, goodbye, reconnect)
    }

    companion object {
        /** The GOODBYE reasons of §4 and §1a with which a host refuses an SDK for good. */
        fun isRefusal(reason: String) =
            reason.startsWith(VERSION_MISMATCH_PREFIX) || reason.startsWith(TOKEN_REFUSED_PREFIX)

        const val VERSION_MISMATCH_PREFIX = "protocol version mismatch"
        const val TOKEN_REFUSED_PREFIX = "run token"
    }
}
