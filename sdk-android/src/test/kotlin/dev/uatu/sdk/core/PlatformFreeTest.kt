package dev.uatu.sdk.core

import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.extension
import kotlin.io.path.readBytes
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The core runs on any JVM: none of its classes may refer to the Android framework. */
class PlatformFreeTest {
    @Test
    fun `no class of the core refers to android`() {
        val core = Path.of("target/classes/dev/uatu/sdk/core")
        val classes = Files.walk(core).use { paths -> paths.filter { it.extension == "class" }.toList() }
        assertTrue(classes.size > 10, "the core's classes are not under $core")
        val offenders = classes.filter { String(it.readBytes(), Charsets.ISO_8859_1).contains("android/") }
        assertTrue(offenders.isEmpty(), "core classes referring to android: $offenders")
    }
}
