package dev.uatu.sidecar.fakedevice

import kotlin.random.Random

/**
 * Where a device cuts what it sends. A device's adbd forwards a command's output
 * as it reads it from a pipe, so packet boundaries fall anywhere: inside a line,
 * inside a UTF-8 character. [whole] sends each piece in as few packets as the
 * transport allows; [arbitrary] cuts at seeded random places (1 to [maxChunk]
 * bytes), the same places for the same seed.
 */
class Chunking private constructor(private val random: Random?, private val maxChunk: Int) {
    /** The pieces of [bytes], none longer than [limit]; one empty piece for no bytes. */
    fun split(bytes: ByteArray, limit: Int): List<ByteArray> {
        if (bytes.isEmpty()) return listOf(bytes)
        val pieces = ArrayList<ByteArray>()
        var start = 0
        while (start < bytes.size) {
            val most = minOf(limit, bytes.size - start)
            val size = if (random == null) most else minOf(most, synchronized(random) { random.nextInt(1, maxChunk + 1) })
            pieces += bytes.copyOfRange(start, start + size)
            start += size
        }
        return pieces
    }

    override fun toString() = if (random == null) "whole" else "arbitrary (at most $maxChunk bytes)"

    companion object {
        fun whole() = Chunking(null, Int.MAX_VALUE)

        fun arbitrary(seed: Long, maxChunk: Int = 4096): Chunking {
            require(maxChunk >= 1) { "a chunk holds at least one byte" }
            return Chunking(Random(seed), maxChunk)
        }
    }
}
