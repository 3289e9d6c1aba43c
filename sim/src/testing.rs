//! Driving the simulated Folio from tests and the screenshot tour: taps by content
//! description through the simulated touch screen, as a host would.

use super::bugs::Bugs;
use super::device;
use super::folio::{DEMO_EMAIL, DEMO_PASSWORD, Folio, SLOW_AUTH_MS};
use super::screen;
use uatu_device::model::{Key, Touch};

/// Taps the centre of the element with content description `desc`; false if none is shown.
pub fn tap_desc(folio: &mut Folio, desc: &str) -> bool {
    let root = screen::hierarchy(folio).root;
    let Some(centre) = root
        .descendants()
        .find(|node| node.desc == desc)
        .map(|node| node.bounds.centre())
    else {
        return false;
    };
    device::tap(folio, Touch::at(centre)).delivered
}

/// Taps the field `desc` and types `text` into it.
pub fn type_into(folio: &mut Folio, desc: &str, text: &str) -> bool {
    tap_desc(folio, desc) && folio.input_text(text).delivered
}

/// A scripted walk through every Folio screen: (name, the app showing it).
pub fn tour(bugs: Bugs, seed: u64) -> Vec<(&'static str, Folio)> {
    let mut screens = Vec::new();
    let mut folio = Folio::new(bugs, seed);
    screens.push(("01-login", folio.clone()));
    type_into(&mut folio, "login_email", DEMO_EMAIL);
    type_into(&mut folio, "login_password", "wrong");
    tap_desc(&mut folio, "login_submit");
    screens.push(("02-login-error", folio.clone()));
    type_into(&mut folio, "login_password", DEMO_PASSWORD);
    tap_desc(&mut folio, "login_submit");
    screens.push(("03-login-authenticating", folio.clone()));
    folio.sleep(SLOW_AUTH_MS);
    screens.push(("04-home", folio.clone()));
    tap_desc(&mut folio, "add_account_button");
    type_into(
        &mut folio,
        "account_name_field",
        "Holiday fund for the whole family and friends",
    );
    tap_desc(&mut folio, "add_account_submit");
    screens.push(("05-add-account-error", folio.clone()));
    type_into(&mut folio, "account_name_field", "Holiday fund");
    tap_desc(&mut folio, "add_account_submit");
    tap_desc(&mut folio, "account_card:a1");
    tap_desc(&mut folio, "add_txn_button");
    type_into(&mut folio, "txn_amount", "1,250.00");
    type_into(&mut folio, "txn_note", "Savings plan");
    tap_desc(&mut folio, "txn_credit");
    tap_desc(&mut folio, "txn_submit");
    screens.push(("06-ledger", folio.clone()));
    tap_desc(&mut folio, "add_txn_button");
    type_into(&mut folio, "txn_amount", "12.5x");
    tap_desc(&mut folio, "txn_credit");
    tap_desc(&mut folio, "txn_submit");
    screens.push(("07-add-transaction-error", folio.clone()));
    folio.press_key(Key::Home);
    screens.push(("08-launcher", folio.clone()));
    screens
}
