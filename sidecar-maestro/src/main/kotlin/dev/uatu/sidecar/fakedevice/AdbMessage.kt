package dev.uatu.sidecar.fakedevice

import java.io.DataInputStream
import java.io.EOFException
import java.io.IOException
import java.io.InputStream
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * One message of the ADB transport protocol, the one adbd speaks to the ADB
 * server over USB or TCP (AOSP `packages/modules/adb/protocol.txt`): a 24-byte
 * header of six little-endian 32-bit words (command, arg0, arg1, payload length,
 * payload checksum, command XOR 0xFFFFFFFF), then the payload.
 */
class AdbMessage(val command: Int, val arg0: Int, val arg1: Int, val payload: ByteArray = EMPTY) {
    /** The header and payload as sent. The checksum is the sum of the payload's bytes, which every version accepts. */
    fun encode(): ByteArray {
        val buffer = ByteBuffer.allocate(HEADER_SIZE + payload.size).order(ByteOrder.LITTLE_ENDIAN)
        buffer.putInt(command).putInt(arg0).putInt(arg1).putInt(payload.size).putInt(checksum(payload)).putInt(command.inv())
        buffer.put(payload)
        return buffer.array()
    }

    /** The payload as a string without its trailing NUL (service names and banners end with one). */
    val payloadText: String get() = String(payload, Charsets.UTF_8).trimEnd('\u0000')

    override fun toString() = "${commandName(command)}($arg0, $arg1, ${payload.size} bytes)"

    companion object {
        const val HEADER_SIZE = 24

        const val SYNC = 0x434e5953
        const val CNXN = 0x4e584e43
        const val AUTH = 0x48545541
        const val OPEN = 0x4e45504f
        const val OKAY = 0x59414b4f
        const val CLSE = 0x45534c43
        const val WRTE = 0x45545257

        /** The protocol version of adb 1.0.32 and later (payload checksums may be skipped). */
        const val VERSION = 0x01000001

        /** AUTH's arg0: what the payload is. */
        const val AUTH_TOKEN = 1
        const val AUTH_SIGNATURE = 2
        const val AUTH_RSA_PUBLIC_KEY = 3

        private val EMPTY = ByteArray(0)

        fun checksum(payload: ByteArray): Int = payload.sumOf { it.toInt() and 0xFF }

        fun commandName(command: Int): String = when (command) {
            SYNC -> "SYNC"
            CNXN -> "CNXN"
            AUTH -> "AUTH"
            OPEN -> "OPEN"
            OKAY -> "OKAY"
            CLSE -> "CLSE"
            WRTE -> "WRTE"
            else -> "0x%08x".format(command)
        }

        /** A NUL-terminated string payload (CNXN banners, OPEN destinations). */
        fun text(value: String): ByteArray = value.toByteArray(Charsets.UTF_8) + 0

        /**
         * Reads one message; a checksum is checked when present (adb sends 0 from
         * version 0x01000001 on). Throws [EOFException] at the end of the stream and
         * [AdbProtocolException] on a header that is not ADB's.
         */
        fun read(input: InputStream, maxPayload: Int): AdbMessage {
            val data = DataInputStream(input)
            val header = ByteArray(HEADER_SIZE)
            data.readFully(header)
            val words = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN)
            val command = words.getInt()
            val arg0 = words.getInt()
            val arg1 = words.getInt()
            val length = words.getInt()
            val check = words.getInt()
            val magic = words.getInt()
            if (magic != command.inv()) throw AdbProtocolException("bad magic 0x%08x for command 0x%08x".format(magic, command))
            if (length < 0 || length > maxPayload) throw AdbProtocolException("${commandName(command)} payload of $length bytes (at most $maxPayload)")
            val payload = ByteArray(length)
            data.readFully(payload)
            if (check != 0 && check != checksum(payload)) throw AdbProtocolException("${commandName(command)} payload checksum mismatch")
            return AdbMessage(command, arg0, arg1, payload)
        }
    }
}

/** Bytes on the transport that are not the ADB protocol. */
class AdbProtocolException(message: String) : IOException(message)
