package dev.uatu.sidecar.android

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.Arguments
import org.junit.jupiter.params.provider.MethodSource

class InputTextTest {
    companion object {
        /** text -> the shell commands typing it on the device. */
        @JvmStatic
        fun typeable(): List<Arguments> = listOf(
            Arguments.of("hello", listOf("input text 'hello'")),
            Arguments.of("two words", listOf("input text 'two%swords'")),
            Arguments.of(" lead", listOf("input text '%slead'")),
            Arguments.of("it's", listOf("""input text 'it'\''s'""")),
            Arguments.of("say \"hi\"", listOf("""input text 'say%s"hi"'""")),
            Arguments.of("a&b", listOf("input text 'a&b'")),
            Arguments.of("a;b|c", listOf("input text 'a;b|c'")),
            Arguments.of("\$HOME", listOf("input text '\$HOME'")),
            Arguments.of("`id`", listOf("input text '`id`'")),
            Arguments.of("a\\b", listOf("""input text 'a\b'""")),
            Arguments.of("(x)<y>{z}[w]", listOf("input text '(x)<y>{z}[w]'")),
            Arguments.of("*?~#!", listOf("input text '*?~#!'")),
            Arguments.of("100%", listOf("input text '100%'")),
            Arguments.of("50% off", listOf("input text '50%%soff'")), // "%%s" is typed "% "
            Arguments.of("%s", listOf("input text '%'", "input text 's'")),
            Arguments.of("a%sb%sc", listOf("input text 'a%'", "input text 'sb%'", "input text 'sc'")),
            Arguments.of("line1\nline2", listOf("input text 'line1'", "input keyevent 66", "input text 'line2'")),
            Arguments.of("crlf\r\nnext", listOf("input text 'crlf'", "input keyevent 66", "input text 'next'")),
            Arguments.of("\n", listOf("input keyevent 66")),
            Arguments.of("a\tb", listOf("input text 'a'", "input keyevent 61", "input text 'b'")),
            Arguments.of("''", listOf("""input text ''\'''\'''""")),
            Arguments.of("", emptyList<String>()),
        )

        @JvmStatic
        fun untypeable(): List<Arguments> = listOf(
            Arguments.of("café", listOf('é')),
            Arguments.of("naïve façade", listOf('ï', 'ç')),
            Arguments.of("£5 €5 £6", listOf('£', '€')),
            Arguments.of("日本", listOf('日', '本')),
            Arguments.of("ok \u0007", listOf('\u0007')),
            Arguments.of("\u00A0", listOf('\u00A0')),
        )
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("typeable")
    fun `printable ASCII, newlines and tabs become input commands`(text: String, expected: List<String>) {
        val plan = InputText.plan(text)
        assertEquals(InputText.Plan.Commands(expected), plan)
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("untypeable")
    fun `other characters need the ADB keyboard`(text: String, expected: List<Char>) {
        assertEquals(InputText.Plan.NeedsKeyboard(expected), InputText.plan(text))
    }

    @Test
    fun `what the device types is the text, for every pair of printable ASCII characters`() {
        val ascii = (' '..'~').toList()
        for (a in ascii) for (b in ascii) {
            val text = "$a$b\n%s$a"
            assertEquals(text, typedOnDevice(InputText.plan(text) as InputText.Plan.Commands), "text `$text`")
        }
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("typeable")
    fun `what the device types is the text, for the table`(text: String, @Suppress("UNUSED_PARAMETER") expected: List<String>) {
        assertEquals(text.replace("\r\n", "\n"), typedOnDevice(InputText.plan(text) as InputText.Plan.Commands))
    }

    /** The device's side: sh's unquoting of each word, then `input text`'s `%s` handling, and the key events. */
    private fun typedOnDevice(plan: InputText.Plan.Commands): String = plan.commands.joinToString("") { command ->
        when {
            command == "input keyevent 66" -> "\n"
            command == "input keyevent 61" -> "\t"
            else -> androidInputText(unquote(command.removePrefix("input text ")))
        }
    }

    /** `input text`'s own reading of its argument (InputShellCommand.sendText): "%s" is a space. */
    private fun androidInputText(argument: String): String {
        val buffer = StringBuilder(argument)
        var escape = false
        var i = 0
        while (i < buffer.length) {
            if (escape) {
                escape = false
                if (buffer[i] == 's') {
                    buffer.setCharAt(i, ' ')
                    buffer.deleteCharAt(--i)
                }
            }
            if (buffer[i] == '%') escape = true
            i++
        }
        return buffer.toString()
    }

    @Test
    fun `the ADB keyboard gets the whole text in base64`() {
        val command = InputText.adbKeyboardCommand("café\n日本")
        assertTrue(command.startsWith("am broadcast -a ADB_INPUT_B64 --es msg "))
        val encoded = command.substringAfterLast(' ')
        assertEquals("café\n日本", String(java.util.Base64.getDecoder().decode(encoded), Charsets.UTF_8))
    }

    @Test
    fun `commands of a text are joined into one shell call`() {
        val plan = InputText.plan("a\nb") as InputText.Plan.Commands
        assertEquals("input text 'a' && input keyevent 66 && input text 'b'", plan.shellCommand)
    }

    /** sh's reading of one word made of '...' and \' pieces. */
    private fun unquote(word: String): String {
        val out = StringBuilder()
        var i = 0
        while (i < word.length) {
            when (word[i]) {
                '\'' -> {
                    val end = word.indexOf('\'', i + 1)
                    out.append(word, i + 1, end)
                    i = end + 1
                }
                '\\' -> {
                    out.append(word[i + 1])
                    i += 2
                }
                else -> error("unquoted character in $word")
            }
        }
        return out.toString()
    }
}
