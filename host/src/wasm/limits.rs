//! What the spec and plugin sandboxes share: a memory cap that
//! remembers being hit, and clocks that never move.

use std::time::Duration;

use wasmtime::ResourceLimiter;

/// Caps each linear memory, bounds tables, and remembers whether the guest ran
/// into the cap (so that the failed call can be reported as such).
pub struct MemoryCap {
    /// The most bytes one linear memory may grow to.
    pub cap: usize,
    /// Set when a growth was refused; the caller reads and clears it after a failed call.
    pub exceeded: bool,
}

impl MemoryCap {
    /// A cap of `cap` bytes, not yet hit.
    pub fn new(cap: usize) -> MemoryCap {
        MemoryCap { cap, exceeded: false }
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.cap {
            self.exceeded = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 20)
    }
}

/// A clock that always says zero: guests take their time from the state or the
/// step context (the device's time), which keeps runs replayable.
pub struct FixedClock;

impl wasmtime_wasi::HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_millis(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl wasmtime_wasi::HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}
