package dev.uatu.sidecar.android

import java.util.Base64

/**
 * How a text is typed on Android through the shell.
 *
 * `input text ARG` types ARG through the virtual keyboard's key map, with two
 * quirks: `%s` in ARG means a space, and there is no escape for a literal `%`
 * followed by `s`. It can type printable ASCII only: other characters (accents,
 * CJK, emoji) have no key on that map and make the command fail, and a newline
 * or tab is a key press, not text.
 *
 * So a text becomes a list of shell commands: printable ASCII runs as
 * `input text '...'` (spaces as `%s`, shell-quoted, split between a literal `%`
 * and a following `s`), newlines and tabs as `input keyevent` ENTER and TAB.
 * Text with other characters cannot be typed this way; it is sent whole to the
 * ADB Keyboard IME (`com.android.adbkeyboard/.AdbIME`) when the device has it
 * as its current input method, and refused with a reason otherwise.
 */
object InputText {
    const val ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
    const val KEYCODE_ENTER = 66
    const val KEYCODE_TAB = 61

    sealed interface Plan {
        /** Shell commands typing the text, in order (joined with `&&` into one shell call). */
        data class Commands(val commands: List<String>) : Plan {
            val shellCommand: String get() = commands.joinToString(" && ")
        }

        /** Characters `input text` cannot type; typed by the ADB Keyboard if present, else refused. */
        data class NeedsKeyboard(val untypeable: List<Char>) : Plan
    }

    fun plan(text: String): Plan {
        val untypeable = text.filter { !isTypeable(it) && it != '\n' && it != '\r' && it != '\t' }
        if (untypeable.isNotEmpty()) return Plan.NeedsKeyboard(untypeable.toList().distinct())
        val commands = mutableListOf<String>()
        val run = StringBuilder()
        fun flush() {
            if (run.isNotEmpty()) commands += typeCommand(run.toString())
            run.clear()
        }
        var i = 0
        while (i < text.length) {
            val c = text[i]
            when {
                c == '\r' && text.getOrNull(i + 1) == '\n' -> Unit // CRLF: one ENTER, for the '\n'
                c == '\n' || c == '\r' -> { flush(); commands += "input keyevent $KEYCODE_ENTER" }
                c == '\t' -> { flush(); commands += "input keyevent $KEYCODE_TAB" }
                else -> {
                    run.append(c)
                    // `input text` reads "%s" as a space whatever precedes it: end the run
                    // after a literal '%' that a literal 's' follows.
                    if (c == '%' && text.getOrNull(i + 1) == 's') flush()
                }
            }
            i++
        }
        flush()
        return Plan.Commands(commands)
    }

    /** `input text` with spaces as `%s`, single-quoted for the device's shell. */
    fun typeCommand(run: String): String = "input text " + shellQuote(run.replace(" ", "%s"))

    /** The ADB Keyboard's broadcast typing `text` (base64, so any character survives the shell). */
    fun adbKeyboardCommand(text: String): String =
        "am broadcast -a ADB_INPUT_B64 --es msg " + Base64.getEncoder().encodeToString(text.toByteArray(Charsets.UTF_8))

    /** Printable ASCII: what the virtual keyboard's key map has keys for. */
    fun isTypeable(c: Char): Boolean = c in ' '..'~'

    /** One shell word: single quotes keep everything literal; a quote itself is closed, escaped, reopened. */
    fun shellQuote(word: String): String = "'" + word.replace("'", "'\\''") + "'"
}
