package dev.uatu.sdk.core

import kotlinx.serialization.json.Json
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class JsonValuesTest {
    private enum class Route { LEDGER }

    @Test
    fun `supported values become the JSON they look like`() {
        val value = mapOf(
            "s" to "é", "c" to 'x', "b" to true, "i" to 3, "l" to (1L shl 40), "d" to 2.5,
            "e" to Route.LEDGER, "n" to null, "list" to listOf(1, listOf<Int>()), "array" to arrayOf("a"),
            "ints" to intArrayOf(1, 2), "set" to linkedSetOf("x"),
        )
        assertEquals(
            Json.parseToJsonElement("""{"s":"é","c":"x","b":true,"i":3,"l":1099511627776,"d":2.5,"e":"LEDGER","n":null,"list":[1,[]],"array":["a"],"ints":[1,2],"set":["x"]}"""),
            JsonValues.toJson(value),
        )
    }

    @Test
    fun `unsupported values are refused with their path`() {
        val nan = assertThrows<UnserialisableValueException> { JsonValues.toJson(mapOf("a" to listOf(1.0, Double.NaN))) }
        assertEquals("$.a[1]", nan.path)
        val key = assertThrows<UnserialisableValueException> { JsonValues.toJson(mapOf(1 to "x")) }
        assertTrue("not a string" in key.message!!)
        val cycle = mutableListOf<Any>()
        cycle.add(cycle)
        val deep = assertThrows<UnserialisableValueException> { JsonValues.toJson(cycle) }
        assertTrue("deeper than" in deep.message!!)
    }
}

class LogBufferTest {
    @Test
    fun `a full buffer drops the oldest lines and says how many`() {
        val buffer = LogBuffer(capacity = 3, clock = { 9 })
        repeat(5) { buffer.add(LogLevel.INFO, "t", "line $it") }
        val lines = buffer.drain()
        assertEquals(listOf("uatu dropped 2 log lines: the buffer holds 3 between two pauses", "line 2", "line 3", "line 4"), lines.map { it.message })
        assertTrue(buffer.drain().isEmpty())
    }
}
