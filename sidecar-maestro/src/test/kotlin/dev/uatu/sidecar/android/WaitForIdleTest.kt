package dev.uatu.sidecar.android

import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.builtinScreen
import dev.uatu.sidecar.fastSettings
import dev.uatu.sidecar.folioDevice
import dev.uatu.sidecar.shellReply
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Maestro's idle rule: two consecutive equal dumps; a timeout ends the wait, whatever the screen does. */
class WaitForIdleTest {
    private val accounts = builtinScreen("folio-accounts.xml")
    private val account = builtinScreen("folio-account.xml")
    private fun tty(xml: String) = shellReply(xml + "UI hierchary dumped to: /dev/tty\n")

    /** `accounts` with the balance of the first row changed: a screen still updating. */
    private fun balance(n: Int) = accounts.replace("&#163;1,204.50", "&#163;1,204.$n")

    private fun driverWith(vararg dumps: ScriptedDevice.Reply) = folioDevice().let { device ->
        device.on("uiautomator dump", *dumps)
        device to AndroidDriver({ device }, fastSettings)
    }

    private fun screens(vararg xml: String) = xml.map { tty(it) }.toTypedArray()

    @Test
    fun `a screen that settles is idle at the first two equal dumps`() {
        val (device, driver) = driverWith(*screens(balance(1), balance(2), balance(3), balance(3), balance(4)))
        val outcome = driver.waitForIdle(5_000)
        assertTrue(outcome.idle, outcome.detail)
        assertEquals(4, outcome.dumps)
        assertEquals(4, device.commands.count { it.startsWith("uiautomator") })
        driver.close()
    }

    @Test
    fun `a screen that never settles times out and says so`() {
        val device = folioDevice()
        var n = 0
        // Every dump differs from the one before: a clock ticking on screen.
        device.onEvery({ it.startsWith("uiautomator dump") }) { tty(balance(++n)) }
        val driver = AndroidDriver({ device }, fastSettings.copy(idlePollMs = 20))
        val started = System.nanoTime()
        val outcome = driver.waitForIdle(300)
        val tookMs = (System.nanoTime() - started) / 1_000_000
        assertFalse(outcome.idle)
        assertTrue(outcome.waitedMs >= 300, "waited ${outcome.waitedMs} ms")
        assertTrue(tookMs < 5_000, "the wait ended ($tookMs ms)")
        assertTrue(outcome.dumps in 2..30, "${outcome.dumps} dumps")
        assertTrue(outcome.detail.contains("still changed after 300 ms"), outcome.detail)
        driver.close()
    }

    @Test
    fun `a flickering screen (A, B, A, B) is never idle`() {
        val device = folioDevice()
        var n = 0
        device.onEvery({ it.startsWith("uiautomator dump") }) { tty(if (n++ % 2 == 0) accounts else account) }
        val driver = AndroidDriver({ device }, fastSettings.copy(idlePollMs = 10))
        val outcome = driver.waitForIdle(200)
        assertFalse(outcome.idle)
        assertTrue(outcome.dumps >= 3, "${outcome.dumps} dumps")
        driver.close()
    }

    @Test
    fun `busy answers count as changes, then the screen settles`() {
        val (_, driver) = driverWith(
            shellReply("ERROR: could not get idle state.\n"),
            tty(accounts),
            shellReply("ERROR: could not get idle state.\n"),
            tty(accounts),
            tty(accounts),
        )
        val outcome = driver.waitForIdle(5_000)
        assertTrue(outcome.idle)
        assertEquals(5, outcome.dumps)
        driver.close()
    }

    @Test
    fun `a slow dump past the timeout ends the wait after it, not later`() {
        val slow = shellReply(balance(7) + "UI hierchary dumped to: /dev/tty\n", delayMs = 400)
        val (_, driver) = driverWith(slow)
        val outcome = driver.waitForIdle(100)
        assertFalse(outcome.idle)
        assertEquals(1, outcome.dumps)
        driver.close()
    }
}
