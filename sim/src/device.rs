//! The simulated device's shared state: the Folio model behind one lock, and
//! the pause gate the SDK closes while the host inspects a state.

use std::sync::{Mutex, MutexGuard};

use tokio::sync::watch;

use super::folio::Folio;

pub(crate) struct DeviceState {
    pub folio: Folio,
    /// The id of the PAUSE the SDK is holding the app at, if any. Input waits for RESUME.
    pub paused: Option<u64>,
}

pub(crate) struct Device {
    state: Mutex<DeviceState>,
    /// Bumped after every change, so waiters (input behind a pause, the SDK
    /// watching its process) wake up and look again.
    changes: watch::Sender<u64>,
}

impl Device {
    pub fn new(folio: Folio) -> Device {
        Device {
            state: Mutex::new(DeviceState { folio, paused: None }),
            changes: watch::Sender::new(0),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, DeviceState> {
        // The model never panics half-way through an update, so a poisoned lock holds a usable state.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub fn changed(&self) {
        self.changes
            .send_modify(|version| *version = version.wrapping_add(1));
    }

    /// Applies an input once the app is not paused; capture calls use [`Device::lock`] directly.
    pub async fn input<R>(&self, apply: impl FnOnce(&mut Folio) -> R) -> R {
        let mut changes = self.subscribe();
        let mut apply = Some(apply);
        loop {
            {
                let mut state = self.lock();
                if state.paused.is_none()
                    && let Some(apply) = apply.take()
                {
                    let result = apply(&mut state.folio);
                    drop(state);
                    self.changed();
                    return result;
                }
            }
            // The sender lives as long as `self`, so this cannot fail while we wait.
            let _ = changes.changed().await;
        }
    }

    pub fn set_paused(&self, paused: Option<u64>) {
        self.lock().paused = paused;
        self.changed();
    }
}
