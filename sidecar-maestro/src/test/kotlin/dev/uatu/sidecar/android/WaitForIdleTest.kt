package dev.uatu.sidecar.android

import dev.uatu.sidecar.adb.DeviceLatency
import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.builtinScreen
import dev.uatu.sidecar.fastSettings
import dev.uatu.sidecar.folioDevice
import dev.uatu.sidecar.shellReply
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * UIAutomator's idle rule: a dump succeeds only after a second without
 * accessibility events, so the first dump that gives a screen means idle; a
 * screen that never settles fails each dump after 10 s.
 */
class WaitForIdleTest {
    private val accounts = builtinScreen("folio-accounts.xml")
    private fun written(xml: String) = shellReply("UI hierchary dumped to: ${AndroidDriver.DUMP_FILE}\n$xml")
    private val noWindow = shellReply("", stderr = "ERROR: null root node returned by UiTestAutomationBridge.\n")
    private val neverIdle = shellReply("", stderr = "ERROR: could not get idle state.\n")

    private fun driverWith(vararg dumps: ScriptedDevice.Reply) = folioDevice().let { device ->
        device.on("uiautomator dump", *dumps)
        device to AndroidDriver({ device }, fastSettings)
    }

    private fun dumpsOf(device: ScriptedDevice) = device.commands.count { it.contains("uiautomator dump") }

    @Test
    fun `the first dump that gives a screen means idle, and Hierarchy answers with it`() {
        val (device, driver) = driverWith(noWindow, noWindow, written(accounts))
        val outcome = driver.waitForIdle(5_000)
        assertTrue(outcome.idle, outcome.detail)
        assertEquals(3, outcome.dumps)
        assertEquals("Accounts", driver.hierarchy().dump.windows.single().descendantsAndSelf().first { it.text.isNotEmpty() }.text)
        assertEquals(3, dumpsOf(device), "Hierarchy dumped again right after WaitForIdle")
        driver.close()
    }

    @Test
    fun `an input after WaitForIdle makes Hierarchy dump again`() {
        val (device, driver) = driverWith(written(accounts))
        assertTrue(driver.waitForIdle(5_000).idle)
        driver.tap(10, 10)
        driver.hierarchy()
        assertEquals(2, dumpsOf(device))
        driver.close()
    }

    @Test
    fun `a screen that never settles is not idle after one dump and says why`() {
        val (device, driver) = driverWith(neverIdle)
        val outcome = driver.waitForIdle(5_000)
        assertFalse(outcome.idle)
        assertEquals(1, outcome.dumps, "that dump took the device 10 s: no second one within the wait")
        assertTrue(outcome.detail.contains("could not get idle state"), outcome.detail)
        assertEquals(1, dumpsOf(device))
        driver.close()
    }

    @Test
    fun `a never-idle screen of the device itself waits its 10 s of idle timeout, then says so`() {
        val device = folioDevice()
        device.latency = DeviceLatency.realistic(seed = 3)
        device.neverIdleScreens = setOf("folio-accounts")
        val driver = AndroidDriver({ device }, fastSettings.copy(commandTimeoutMs = 30_000))
        driver.launch("app.folio", clearState = false, launcherActivity = null)
        val outcome = driver.waitForIdle(1_000)
        assertFalse(outcome.idle)
        assertTrue(outcome.waitedMs >= DeviceLatency.NEVER_IDLE_TIMEOUT_MS, "answered after ${outcome.waitedMs} ms")
        assertTrue(outcome.detail.contains("could not get idle state"), outcome.detail)
        driver.close()
    }

    @Test
    fun `a slow dump past the timeout ends the wait after it, not later`() {
        val slow = shellReply("", stderr = "ERROR: null root node returned by UiTestAutomationBridge.\n", delayMs = 400)
        val (device, driver) = driverWith(slow)
        val outcome = driver.waitForIdle(100)
        assertFalse(outcome.idle)
        assertEquals(1, outcome.dumps)
        assertEquals(1, dumpsOf(device))
        driver.close()
    }
}
