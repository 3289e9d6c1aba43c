package dev.uatu.sidecar.android

import dev.uatu.sidecar.DriverException
import dev.uatu.sidecar.adb.ScriptedDevice
import dev.uatu.sidecar.builtinScreen
import dev.uatu.sidecar.fastSettings
import dev.uatu.sidecar.folioDevice
import dev.uatu.sidecar.shellReply
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
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
        val outcome = driver.waitForIdle(300)
        assertFalse(outcome.idle)
        assertTrue(outcome.waitedMs >= 300, "waited ${outcome.waitedMs} ms")
        // One dump when the first alone outlasted the timeout on a busy machine; never more than one per poll.
        assertTrue(outcome.dumps in 1..(outcome.waitedMs / 20 + 1), "${outcome.dumps} dumps in ${outcome.waitedMs} ms")
        assertTrue(outcome.detail.contains("still changed after 300 ms"), outcome.detail)
        driver.close()
    }

    @Test
    fun `a flickering screen (A, B, A, B) is never idle`() {
        val device = folioDevice()
        var n = 0
        // Six dumps alternating, then a failure that ends the wait: idle at any of them would have ended it first.
        device.onEvery({ it.startsWith("uiautomator dump") }) {
            if (n < 6) tty(if (n++ % 2 == 0) accounts else account) else shellReply("ERROR: dump stopped by the test\n").also { n++ }
        }
        val driver = AndroidDriver({ device }, fastSettings.copy(idlePollMs = 0))
        val error = assertThrows(DriverException::class.java) { driver.waitForIdle(60_000) }
        assertTrue(error.message!!.contains("dump stopped by the test"), error.message)
        assertEquals(7, n, "dumps taken")
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
