package dev.uatu.sidecar.adb

import java.io.IOException

/**
 * The narrow boundary between the Android backend and a device: everything the
 * backend does to a device goes through these calls. The real implementation
 * talks to the device over dadb ([AdbServerDevice]); tests and `--fake-device`
 * use [ScriptedDevice], which answers like a device.
 *
 * Every call may throw [IOException] when the device cannot be reached.
 */
interface Adb : AutoCloseable {
    /** The device's serial, as `adb devices` lists it. */
    val serial: String

    /** Runs `command` in the device's shell (`sh -c`), with its output and exit code. */
    fun shell(command: String): ShellResult

    /**
     * Starts `command` in the device's shell and reads its standard output as it
     * comes, for commands that do not end by themselves (`logcat` without `-d`).
     * Closing the stream ends the command on the device.
     */
    fun shellStream(command: String): ShellStream

    /**
     * Runs `command` on a raw stream (adb's `exec:` service) and returns its
     * standard output byte for byte: binary output such as `screencap -p`
     * would be damaged by a text decoding.
     */
    fun execOut(command: String): ByteArray

    /** Writes `content` to `remotePath` on the device. */
    fun push(content: ByteArray, remotePath: String)

    /** Reads `remotePath` from the device. */
    fun pull(remotePath: String): ByteArray

    /**
     * Forwards connections to the device's socket `deviceSocket` (such as
     * `localabstract:uatu-agent`) to `tcp:hostPort` on this machine (`adb reverse`).
     */
    fun reverseForward(deviceSocket: String, hostPort: Int)

    /** Removes a forward set up by [reverseForward]; no error when there is none. */
    fun removeReverseForward(deviceSocket: String)

    override fun close() {}
}

/** The standard output of a command still running, piece by piece. */
interface ShellStream : AutoCloseable {
    /** The next piece of standard output, waiting for it; null once the command ended or the stream was closed. */
    fun next(): ByteArray?

    override fun close()
}

data class ShellResult(val stdout: String, val stderr: String, val exitCode: Int) {
    val ok: Boolean get() = exitCode == 0

    /** Standard output and error together, for messages. */
    val allOutput: String get() = listOf(stdout, stderr).filter { it.isNotBlank() }.joinToString("\n").trim()
}
