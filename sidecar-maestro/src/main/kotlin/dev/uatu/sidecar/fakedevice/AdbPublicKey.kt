package dev.uatu.sidecar.fakedevice

import java.math.BigInteger
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.security.GeneralSecurityException
import java.security.KeyFactory
import java.security.PublicKey
import java.security.Signature
import java.security.spec.RSAPublicKeySpec
import java.util.Base64

/**
 * A key an ADB server offers in `AUTH(RSAPUBLICKEY)`: base64 of Android's
 * `RSAPublicKey` struct (AOSP `libcrypto_utils/android_pubkey.c`: modulus size
 * in words, n0inv, the modulus and R² little-endian, the exponent), then
 * ` user@host`. What adbd keeps in `adb_keys` and checks signatures with.
 */
class AdbPublicKey private constructor(private val key: PublicKey) {
    /** Whether [signature] is the token signed with this key as adb signs it: PKCS#1 v1.5 over the token as a SHA-1 digest. */
    fun signed(token: ByteArray, signature: ByteArray): Boolean = try {
        Signature.getInstance("NONEwithRSA").run {
            initVerify(key)
            update(SHA1_DIGEST_INFO + token)
            verify(signature)
        }
    } catch (e: GeneralSecurityException) {
        false
    }

    companion object {
        private const val MODULUS_BYTES = 256
        private val SHA1_DIGEST_INFO = byteArrayOf(
            0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14,
        )

        /** Reads the key text; throws [AdbProtocolException] when it is not one. */
        fun parse(text: String): AdbPublicKey {
            val encoded = text.trim().substringBefore(' ')
            val bytes = try {
                Base64.getDecoder().decode(encoded)
            } catch (e: IllegalArgumentException) {
                throw AdbProtocolException("the public key is not base64: ${e.message}")
            }
            if (bytes.size != 4 + 4 + 2 * MODULUS_BYTES + 4) throw AdbProtocolException("a public key of ${bytes.size} bytes is not adb's")
            val words = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
            if (words.getInt(0) != MODULUS_BYTES / 4) throw AdbProtocolException("a modulus of ${words.getInt(0)} words is not adb's")
            val modulus = BigInteger(1, bytes.copyOfRange(8, 8 + MODULUS_BYTES).reversedArray())
            val exponent = BigInteger.valueOf(words.getInt(8 + 2 * MODULUS_BYTES).toLong() and 0xFFFFFFFFL)
            return AdbPublicKey(KeyFactory.getInstance("RSA").generatePublic(RSAPublicKeySpec(modulus, exponent)))
        }
    }
}
