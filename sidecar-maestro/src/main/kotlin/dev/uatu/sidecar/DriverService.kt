package dev.uatu.sidecar

import dev.uatu.sidecar.android.AndroidDriver
import dev.uatu.sidecar.android.InputOutcome
import io.grpc.Status
import io.grpc.stub.StreamObserver
import uatu.driver.v1.AndroidDeviceGrpc
import uatu.driver.v1.DriverGrpc
import uatu.driver.v1.DriverOuterClass.*

/**
 * driver.proto's Driver service over an [AndroidDriver]. Each call answers or
 * fails with the status of its [DriverException]; anything unexpected is
 * INTERNAL with its message, never a silent UNKNOWN.
 */
class DriverService(private val driver: AndroidDriver) : DriverGrpc.DriverImplBase() {

    private fun input(outcome: InputOutcome): InputResponse = InputResponse.newBuilder()
        .setDelivered(outcome.delivered).setDetail(outcome.detail).setDeviceTimeMs(driver.deviceTimeMs()).build()

    private fun requirePoint(request: Boolean, what: String) {
        if (!request) throw DriverException.invalidArgument("$what has no point")
    }

    override fun launch(request: LaunchRequest, observer: StreamObserver<LaunchResponse>) = answer("Launch", observer) {
        val activity = if (request.hasLauncherActivity()) request.launcherActivity else null
        LaunchResponse.newBuilder().setDeviceTimeMs(driver.launch(request.bundleId, request.clearState, activity)).build()
    }

    override fun terminate(request: TerminateRequest, observer: StreamObserver<TerminateResponse>) = answer("Terminate", observer) {
        driver.terminate(request.bundleId)
        TerminateResponse.getDefaultInstance()
    }

    override fun tap(request: TapRequest, observer: StreamObserver<InputResponse>) = answer("Tap", observer) {
        requirePoint(request.hasPoint(), "Tap")
        input(driver.tap(request.point.x, request.point.y))
    }

    override fun tapSelector(request: TapSelectorRequest, observer: StreamObserver<InputResponse>) = answer("TapSelector", observer) {
        val selector = when (request.selectorCase) {
            TapSelectorRequest.SelectorCase.RESOURCE_ID -> AndroidDriver.Selector.ResourceId(request.resourceId)
            TapSelectorRequest.SelectorCase.TEXT -> AndroidDriver.Selector.Text(request.text)
            TapSelectorRequest.SelectorCase.CONTENT_DESCRIPTION -> AndroidDriver.Selector.ContentDescription(request.contentDescription)
            else -> throw DriverException.invalidArgument("TapSelector has no selector")
        }
        input(driver.tapSelector(selector))
    }

    override fun inputText(request: InputTextRequest, observer: StreamObserver<InputResponse>) = answer("InputText", observer) {
        input(driver.inputText(request.text))
    }

    override fun swipe(request: SwipeRequest, observer: StreamObserver<InputResponse>) = answer("Swipe", observer) {
        requirePoint(request.hasFrom() && request.hasTo(), "Swipe")
        input(driver.swipe(request.from.x, request.from.y, request.to.x, request.to.y, request.durationMs))
    }

    override fun pressKey(request: PressKeyRequest, observer: StreamObserver<InputResponse>) = answer("PressKey", observer) {
        input(driver.pressKey(request.key))
    }

    override fun sleep(request: SleepRequest, observer: StreamObserver<InputResponse>) = answer("Sleep", observer) {
        InputResponse.newBuilder().setDelivered(true).setDeviceTimeMs(driver.sleep(Integer.toUnsignedLong(request.durationMs))).build()
    }

    override fun screenshot(request: ScreenshotRequest, observer: StreamObserver<ScreenshotResponse>) = answer("Screenshot", observer) {
        val shot = driver.screenshot()
        ScreenshotResponse.newBuilder().setPng(com.google.protobuf.ByteString.copyFrom(shot.png))
            .setWidth(shot.width).setHeight(shot.height).build()
    }

    override fun hierarchy(request: HierarchyRequest, observer: StreamObserver<HierarchyResponse>) = answer("Hierarchy", observer) {
        driver.hierarchy().toProto()
    }

    override fun recentLogs(request: RecentLogsRequest, observer: StreamObserver<RecentLogsResponse>) = answer("RecentLogs", observer) {
        RecentLogsResponse.newBuilder().addAllEntries(driver.recentLogs(request.sinceMs, request.minLevel)).build()
    }

    override fun waitForIdle(request: WaitForIdleRequest, observer: StreamObserver<WaitForIdleResponse>) = answer("WaitForIdle", observer) {
        val outcome = driver.waitForIdle(Integer.toUnsignedLong(request.timeoutMs))
        if (!outcome.idle) log("WaitForIdle: ${outcome.detail}")
        WaitForIdleResponse.newBuilder().setIdle(outcome.idle).setDeviceTimeMs(driver.deviceTimeMs()).build()
    }

    override fun health(request: HealthRequest, observer: StreamObserver<HealthResponse>) = answer("Health", observer) {
        val report = driver.health()
        HealthResponse.newBuilder().setReady(report.ready).setVersion("$NAME $VERSION (${report.detail})")
            .setPlatform("android").build()
    }

    override fun metrics(request: MetricsRequest, observer: StreamObserver<MetricsResponse>) = answer("Metrics", observer) {
        val (cpu, memory) = driver.metrics()
        MetricsResponse.newBuilder().setCpuPercent(cpu).setMemoryBytes(memory).build()
    }

    companion object {
        const val NAME = "uatu-sidecar-maestro"
        const val VERSION = "0.1.0"

        fun log(message: String) = System.err.println("sidecar: $message")
    }
}

/**
 * Answers one call with what [block] returns, or fails it with the status of its
 * [DriverException]; anything unexpected is INTERNAL with its message.
 */
internal fun <T> answer(call: String, observer: StreamObserver<T>, block: () -> T) {
    val response = try {
        block()
    } catch (e: DriverException) {
        DriverService.log("$call: ${e.code}: ${e.message}")
        observer.onError(e.toStatusException())
        return
    } catch (e: InterruptedException) {
        Thread.currentThread().interrupt()
        observer.onError(Status.CANCELLED.withDescription("$call was interrupted (the sidecar is stopping)").asException())
        return
    } catch (e: Exception) {
        DriverService.log("$call: unexpected ${e.javaClass.name}: ${e.message}")
        observer.onError(Status.INTERNAL.withDescription("$call failed in the sidecar: ${e.javaClass.simpleName}: ${e.message}").withCause(e).asException())
        return
    }
    observer.onNext(response)
    observer.onCompleted()
}

/** driver.proto's AndroidDevice service: what only an Android device answers. */
class AndroidDeviceService(private val driver: AndroidDriver) : AndroidDeviceGrpc.AndroidDeviceImplBase() {
    override fun focus(request: FocusRequest, observer: StreamObserver<FocusResponse>) = answer("Focus", observer) {
        val focus = driver.focus(request.bundleId)
        FocusResponse.newBuilder().setPackage(focus.packageName).setTitle(focus.title).setKind(focus.kind)
            .setKeyboardShown(focus.keyboardShown).setScreenWidth(focus.width).setScreenHeight(focus.height)
            .setRotation(focus.rotation).setDeviceTimeMs(driver.deviceTimeMs()).build()
    }

    override fun appStatus(request: AppStatusRequest, observer: StreamObserver<AppStatusResponse>) = answer("AppStatus", observer) {
        val status = driver.appStatus(request.bundleId)
        AppStatusResponse.newBuilder().setState(status.state).setPid(status.pid).setDetail(status.detail)
            .setCrash(status.crash).setDeviceTimeMs(driver.deviceTimeMs()).build()
    }

    override fun appInfo(request: AppInfoRequest, observer: StreamObserver<AppInfoResponse>) = answer("AppInfo", observer) {
        val info = driver.appInfo(request.bundleId)
        AppInfoResponse.newBuilder().setDebuggable(info.debuggable)
            .addAllRequestedPermissions(info.permissions.keys).addAllGrantedPermissions(info.permissions.filterValues { it }.keys)
            .setGrantsPermissions(info.grantsPermissions).build()
    }

    override fun install(request: InstallRequest, observer: StreamObserver<InstallResponse>) = answer("Install", observer) {
        if (request.apkPath.isBlank()) throw DriverException.invalidArgument("Install needs the path of an APK")
        InstallResponse.newBuilder().setDetail(driver.install(java.nio.file.Path.of(request.apkPath))).build()
    }
}
