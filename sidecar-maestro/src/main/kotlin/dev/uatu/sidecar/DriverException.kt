package dev.uatu.sidecar

import dev.uatu.sidecar.adb.AdbServerAddress
import io.grpc.Status
import io.grpc.StatusException

/**
 * A failure the host (and the person running uatu) can act on: each carries
 * the gRPC status it is answered with and a message saying what to do.
 * Inputs that merely could not be delivered (nothing matched, off screen) are
 * not errors: driver.proto answers them with `delivered: false`.
 */
class DriverException(val code: Status.Code, message: String, cause: Throwable? = null) :
    RuntimeException(message, cause) {

    fun toStatusException(): StatusException =
        Status.fromCode(code).withDescription(message).withCause(cause).asException()

    companion object {
        fun adbServerUnreachable(server: AdbServerAddress, cause: Throwable) = DriverException(
            Status.Code.UNAVAILABLE,
            "cannot reach the ADB server at $server (${cause.message}): start it with `adb start-server` " +
                "(Android SDK platform-tools), or set ANDROID_ADB_SERVER_PORT",
            cause,
        )

        fun noDevice(server: AdbServerAddress) = DriverException(
            Status.Code.FAILED_PRECONDITION,
            "no Android device is attached (the ADB server at $server lists none): start an emulator or " +
                "plug in a phone with USB debugging on, then check `adb devices`",
        )

        fun severalDevices(serials: List<String>) = DriverException(
            Status.Code.FAILED_PRECONDITION,
            "${serials.size} Android devices are attached (${serials.joinToString()}) and none was chosen: " +
                "pick one with `--device android:SERIAL` (sidecar: `--device SERIAL`)",
        )

        fun deviceNotAttached(serial: String, attached: List<String>) = DriverException(
            Status.Code.FAILED_PRECONDITION,
            "device $serial is not attached (attached: ${attached.ifEmpty { listOf("none") }.joinToString()}): " +
                "check `adb devices` and the serial",
        )

        fun unauthorised(serial: String) = DriverException(
            Status.Code.PERMISSION_DENIED,
            "device $serial has not authorised this computer for USB debugging: unlock it and accept the " +
                "\"Allow USB debugging?\" prompt (if there is none, revoke USB debugging authorisations in " +
                "Developer options and reconnect)",
        )

        fun deviceNotReady(serial: String, state: String) = DriverException(
            Status.Code.UNAVAILABLE,
            "device $serial is $state, not ready: wait for it to boot or reconnect it (`adb reconnect`)",
        )

        fun appNotInstalled(bundleId: String, serial: String) = DriverException(
            Status.Code.NOT_FOUND,
            "app $bundleId is not installed on $serial: install the debug build with the uatu SDK " +
                "(`adb -s $serial install path/to/app-debug.apk`)",
        )

        fun timeout(what: String, serial: String, afterMs: Long) = DriverException(
            Status.Code.DEADLINE_EXCEEDED,
            "$what on $serial gave no answer within $afterMs ms: the device may be busy or hung " +
                "(check it responds to `adb -s $serial shell echo ok`)",
        )

        fun deviceLost(what: String, serial: String, cause: Throwable) = DriverException(
            Status.Code.UNAVAILABLE,
            "$what on $serial failed: ${cause.message ?: cause.javaClass.simpleName} " +
                "(is the device still attached? `adb devices`)",
            cause,
        )

        fun connectionFailed(cause: Throwable) = DriverException(
            Status.Code.UNAVAILABLE,
            "cannot connect to the Android device: ${cause.message ?: cause.javaClass.simpleName} " +
                "(check `adb devices`; `adb kill-server && adb start-server` if it hangs)",
            cause,
        )

        fun reverseForwardFailed(serial: String, deviceSocket: String, hostPort: Int, cause: Throwable) = DriverException(
            Status.Code.UNAVAILABLE,
            "cannot forward $deviceSocket on $serial to tcp:$hostPort for the app's SDK: ${cause.message} " +
                "(try `adb -s $serial reverse $deviceSocket tcp:$hostPort` to see why)",
            cause,
        )

        fun deviceError(what: String, serial: String, detail: String) = DriverException(
            Status.Code.INTERNAL,
            "$what on $serial failed: $detail",
        )

        fun invalidArgument(message: String) = DriverException(Status.Code.INVALID_ARGUMENT, message)
    }
}
