//! The Folio ledger app as a pure, deterministic model: screens, forms,
//! persisted data, a simulated clock, logs, exceptions and coverage probes.
//!
//! Nothing here does I/O or reads the wall clock: the same seed and the same
//! inputs always give the same states, which is what makes a run replayable.

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use super::bugs::{Bug, Bugs};
use uatu_device::model::{ExceptionInfo, Key, LogEntry, LogLevel};

pub const SCREEN_WIDTH: i32 = 1080;
pub const SCREEN_HEIGHT: i32 = 2400;
pub const PACKAGE: &str = "app.folio";
pub const DEMO_EMAIL: &str = "demo@folio.app";
pub const DEMO_PASSWORD: &str = "ledger123";

/// How long the "authenticating" phase of a valid login lasts.
pub const AUTH_MS: u64 = 300;
/// How long a slow login (planted bug `slow-login`) stays authenticating.
pub const SLOW_AUTH_MS: u64 = 5_000;
/// A note is trimmed and silently cut to this many characters.
pub const MAX_NOTE_CHARS: usize = 80;
/// Notes longer than this crash the app under the planted bug `crash-on-long-note`.
pub const CRASHING_NOTE_CHARS: usize = 40;
pub const MAX_ACCOUNT_NAME_CHARS: usize = 40;

const TAP_MS: u64 = 150;
const KEY_MS: u64 = 100;
const SCROLL_MS: u64 = 100;
const TEXT_BASE_MS: u64 = 50;
const TEXT_PER_CHAR_MS: u64 = 20;
const IDLE_MS: u64 = 16;
const COLD_START_MS: u64 = 800;
const WARM_START_MS: u64 = 300;
const MAX_LOGS: usize = 20_000;
/// The longest text a field accepts; longer input is cut, as `maxLength` does.
const FIELD_MAX_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Login,
    Home,
    AddAccount,
    Ledger,
    AddTxn,
}

impl Route {
    pub fn name(self) -> &'static str {
        match self {
            Route::Login => "login",
            Route::Home => "home",
            Route::AddAccount => "add-account",
            Route::Ledger => "ledger",
            Route::AddTxn => "add-transaction",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Credit,
    Debit,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Credit => "credit",
            Kind::Debit => "debit",
        }
    }
}

/// What tapping a widget means to the app; the simulated device finds it by hit-testing the
/// screen built from this model (`screen::resolve_tap`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activate {
    Focus(Field),
    SubmitLogin,
    AddAccount,
    Logout,
    OpenAccount(String),
    SubmitAccount,
    AddTxn,
    SetKind(Kind),
    SubmitTxn,
    Back,
    LauncherIcon,
}

/// A swipe over a scrollable list: how far it moves the content and the furthest it can go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scroll {
    /// Pixels the content moves up (negative: down), the finger's vertical travel reversed.
    pub by: i32,
    /// The largest offset: the content height less the list's visible height.
    pub max: i32,
}

/// A text field of the app, named by its content description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Field {
    Email,
    Password,
    AccountName,
    Amount,
    Note,
}

impl Field {
    pub fn desc(self) -> &'static str {
        match self {
            Field::Email => "login_email",
            Field::Password => "login_password",
            Field::AccountName => "account_name_field",
            Field::Amount => "txn_amount",
            Field::Note => "txn_note",
        }
    }

    fn route(self) -> Route {
        self.form().route()
    }

    pub fn form(self) -> Form {
        match self {
            Field::Email | Field::Password => Form::Login,
            Field::AccountName => Form::Account,
            Field::Amount | Field::Note => Form::Txn,
        }
    }
}

/// A form of the app; each shows at most one error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Form {
    Login,
    Account,
    Txn,
}

impl Form {
    fn route(self) -> Route {
        match self {
            Form::Login => Route::Login,
            Form::Account => Route::AddAccount,
            Form::Txn => Route::AddTxn,
        }
    }
}

pub const LOGIN_FIELDS_EMPTY: &str = "Enter email and password";
pub const LOGIN_INVALID: &str = "Invalid email or password";
pub const ACCOUNT_NAME_REQUIRED: &str = "Account name is required";
pub const ACCOUNT_NAME_TOO_LONG: &str = "Name is too long (max 40 characters)";
pub const ACCOUNT_NAME_TAKEN: &str = "An account with that name already exists";
pub const AMOUNT_INVALID: &str = "Enter a valid amount (e.g. 12.34)";
pub const AMOUNT_NOT_POSITIVE: &str = "Amount must be greater than zero";

#[derive(Debug, Clone, PartialEq)]
pub struct Txn {
    /// `t1`, `t2`, …: numbered across all accounts in creation order.
    pub id: String,
    /// Positive; fractional only under the planted bug `float-cents`.
    pub amount_cents: f64,
    pub kind: Kind,
    pub note: String,
}

impl Txn {
    pub fn signed_cents(&self) -> f64 {
        match self.kind {
            Kind::Credit => self.amount_cents,
            Kind::Debit => -self.amount_cents,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    /// `a1`, `a2`, …: numbered in creation order; the key of `account_card:<id>`.
    pub id: String,
    pub name: String,
    /// Newest last.
    pub txns: Vec<Txn>,
}

impl Account {
    pub fn balance_cents(&self) -> f64 {
        self.txns.iter().map(Txn::signed_cents).sum()
    }
}

/// What the app keeps in its database: the accounts, their transactions and the session.
/// It survives logout, crashes and restarts; only a fresh install (clear data) empties it.
#[derive(Debug, Clone, PartialEq)]
pub struct Persisted {
    pub accounts: Vec<Account>,
    /// A session exists: the user signed in and has not logged out.
    pub logged_in: bool,
    next_account: u32,
    next_txn: u32,
}

impl Persisted {
    /// A fresh install: no accounts and no session.
    fn fresh() -> Persisted {
        Persisted {
            accounts: Vec::new(),
            logged_in: false,
            next_account: 1,
            next_txn: 1,
        }
    }

    pub fn total_cents(&self) -> f64 {
        self.accounts.iter().map(Account::balance_cents).sum()
    }

    fn account(&self, id: &str) -> Option<&Account> {
        self.accounts.iter().find(|account| account.id == id)
    }
}

/// Where the app's process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    Foreground,
    /// Alive behind the launcher (Home or Back on a root screen).
    Background,
    /// Not running: crashed, terminated, or never started.
    Dead,
}

/// The in-memory UI state of one app process; a process start resets it.
#[derive(Debug, Clone)]
pub struct Session {
    pub route: Route,
    pub email: String,
    pub password: String,
    pub focused: Option<Field>,
    /// The focused field's text is selected (`selectAllOnFocus`): typing replaces it.
    pub selected_all: bool,
    pub account_name: String,
    pub amount: String,
    pub note: String,
    pub kind: Kind,
    /// The error each form shows, if any; cleared by an edit of the form or leaving its screen.
    pub errors: BTreeMap<Form, String>,
    /// While a valid login is authenticating: the device time (ms) it completes at.
    pub auth_until: Option<u64>,
    pub active_account: Option<String>,
    /// The total the home screen shows (refreshed on entering home).
    cached_total: f64,
    /// Planted bug `stale-total`: the next entry to home skips the refresh.
    skip_total_refresh: bool,
    pub home_scroll: i32,
    pub ledger_scroll: i32,
    logged_out: bool,
    /// Planted bug `deep-ledger-duplication`: (account, txn) shown twice.
    duplicated_row: Option<(String, String)>,
}

impl Session {
    fn new(persisted: &Persisted) -> Session {
        Session {
            // The stored session decides where the app opens.
            route: if persisted.logged_in {
                Route::Home
            } else {
                Route::Login
            },
            email: String::new(),
            password: String::new(),
            focused: None,
            selected_all: false,
            account_name: String::new(),
            amount: String::new(),
            note: String::new(),
            kind: Kind::Debit,
            errors: BTreeMap::new(),
            auth_until: None,
            active_account: None,
            cached_total: persisted.total_cents(),
            skip_total_refresh: false,
            home_scroll: 0,
            ledger_scroll: 0,
            logged_out: false,
            duplicated_row: None,
        }
    }
}

/// One row of the ledger as the screen lists it (newest first).
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerRow {
    pub txn: Txn,
    pub account_id: String,
}

/// What the device did with one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputResult {
    /// The input reached the device (a tap on nothing still counts); false when it could not
    /// be performed at all, e.g. typing with no focused field, or the element meant is gone.
    pub delivered: bool,
    /// The input arrived where it was aimed (the element meant, a widget that took it, the
    /// focused field): driver.proto's `confirmed`. The model knows, so it says.
    pub confirmed: bool,
    /// Why nothing happened or what was noticed, for the trace; empty when it simply worked.
    pub detail: String,
}

impl InputResult {
    /// Worked, and arrived where it was aimed.
    pub fn delivered() -> InputResult {
        InputResult {
            delivered: true,
            confirmed: true,
            detail: String::new(),
        }
    }

    /// Reached the device, but nothing took it (a tap on an empty spot).
    pub fn noted(detail: impl Into<String>) -> InputResult {
        InputResult {
            delivered: true,
            confirmed: false,
            detail: detail.into(),
        }
    }

    /// Could not be performed at all.
    pub fn refused(detail: impl Into<String>) -> InputResult {
        InputResult {
            delivered: false,
            confirmed: false,
            detail: detail.into(),
        }
    }

    /// The same outcome, said to have arrived where it was aimed (the element meant
    /// was under the touch, even if nothing on it reacts).
    pub fn on_target(self) -> InputResult {
        InputResult {
            confirmed: self.delivered,
            ..self
        }
    }
}

/// Everything an SDK STATE carries, drained from the model.
#[derive(Debug, Clone, PartialEq)]
pub struct StateReport {
    pub snapshots: Map<String, Value>,
    pub exceptions: Vec<ExceptionInfo>,
    pub logs: Vec<LogEntry>,
    pub coverage: Vec<String>,
}

/// The Folio app, its process and the device clock.
#[derive(Debug, Clone)]
pub struct Folio {
    pub bugs: Bugs,
    rng: ChaCha8Rng,
    clock_ms: u64,
    pub process: Process,
    pub persisted: Persisted,
    pub session: Session,
    valid_logins: u64,
    /// Which valid login (mod 3) is slow under `slow-login`; drawn from the seed.
    slow_phase: u64,
    logs: Vec<LogEntry>,
    /// Index in `logs` of the first entry the next STATE reports.
    state_log_cursor: usize,
    /// Uncaught exceptions not yet reported in a STATE (a crash reporter keeps them on disk).
    pending_exceptions: Vec<ExceptionInfo>,
    coverage: BTreeSet<&'static str>,
    generation: u64,
    last_death: Option<(u64, String)>,
    inputs: u64,
}

impl Folio {
    /// A freshly installed Folio, already launched on its login screen.
    pub fn new(bugs: Bugs, seed: u64) -> Folio {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let slow_phase = rng.random_range(0..3);
        let persisted = Persisted::fresh();
        let session = Session::new(&persisted);
        let mut folio = Folio {
            bugs,
            rng,
            clock_ms: 0,
            process: Process::Foreground,
            persisted,
            session,
            valid_logins: 0,
            slow_phase,
            logs: Vec::new(),
            state_log_cursor: 0,
            pending_exceptions: Vec::new(),
            coverage: BTreeSet::new(),
            generation: 1,
            last_death: None,
            inputs: 0,
        };
        folio.log(
            LogLevel::Info,
            "ActivityManager",
            "Start proc app.folio for activity MainActivity",
        );
        folio.probe("app.start.cold");
        folio
    }

    pub fn now(&self) -> u64 {
        self.clock_ms
    }

    /// Which process instance is running; changes on every app start.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Why process `generation` ended, if it has.
    pub fn death_reason(&self, generation: u64) -> Option<String> {
        match (
            &self.last_death,
            self.generation == generation && self.process != Process::Dead,
        ) {
            (_, true) => None,
            (Some((dead, reason)), false) if *dead == generation => Some(reason.clone()),
            _ => Some("app process restarted".into()),
        }
    }

    pub fn is_running(&self) -> bool {
        self.process != Process::Dead
    }

    /// The number of inputs delivered so far (for plausible metrics).
    pub fn input_count(&self) -> u64 {
        self.inputs
    }

    // ----- inputs -------------------------------------------------------

    /// A tap: the touch takes its time, then `hit` says what it activates on the screen as it
    /// is at that moment (or why nothing took it).
    pub fn tap(&mut self, hit: impl FnOnce(&Folio) -> Result<Activate, InputResult>) -> InputResult {
        self.press(TAP_MS, hit)
    }

    /// A touch held for `hold_ms`: on release it activates what it is on, as Android does
    /// for a view that has no long-click action of its own (none of Folio's has).
    pub fn long_press(
        &mut self,
        hold_ms: u64,
        hit: impl FnOnce(&Folio) -> Result<Activate, InputResult>,
    ) -> InputResult {
        self.probe("input.long_press");
        self.press(hold_ms.max(TAP_MS), hit)
    }

    /// A touch held for `ms`; `hit` says what it activates on the screen at its release.
    fn press(&mut self, ms: u64, hit: impl FnOnce(&Folio) -> Result<Activate, InputResult>) -> InputResult {
        self.inputs += 1;
        self.advance(ms);
        match hit(self) {
            Ok(action) => {
                self.activate(action);
                self.settle();
                InputResult::delivered()
            }
            Err(missed) => missed,
        }
    }

    pub fn input_text(&mut self, text: &str) -> InputResult {
        self.inputs += 1;
        self.advance(TEXT_BASE_MS + TEXT_PER_CHAR_MS * text.chars().count() as u64);
        self.edit_focused(|value| {
            let room = FIELD_MAX_CHARS.saturating_sub(value.chars().count());
            value.extend(text.chars().take(room));
        })
    }

    /// Empties the focused field, as selecting its text and deleting it does.
    pub fn clear_text(&mut self) -> InputResult {
        self.inputs += 1;
        self.advance(KEY_MS);
        self.probe("input.clear_text");
        self.edit_focused(String::clear)
    }

    /// Applies `edit` to the focused field's text (all of it replaced first when it is
    /// selected); refused without a focused field.
    fn edit_focused(&mut self, edit: impl FnOnce(&mut String)) -> InputResult {
        if self.process != Process::Foreground {
            return InputResult::refused("no focused text field (the app is not in the foreground)");
        }
        let Some(field) = self.session.focused else {
            self.probe("input.no_focus");
            return InputResult::refused("no focused text field");
        };
        let replace = std::mem::take(&mut self.session.selected_all);
        let value = self.field_mut(field);
        if replace {
            value.clear();
        }
        edit(value);
        if self.session.errors.remove(&field.form()).is_some() {
            self.probe("form.error.cleared_by_edit");
        }
        self.probe(match field {
            Field::Email => "input.email",
            Field::Password => "input.password",
            Field::AccountName => "input.account_name",
            Field::Amount => "input.amount",
            Field::Note => "input.note",
        });
        self.settle();
        InputResult::delivered()
    }

    /// A swipe of `duration_ms`: `scroll` says which way the list under it moves, if any.
    pub fn swipe(&mut self, duration_ms: u64, scroll: impl FnOnce(&Folio) -> Option<Scroll>) -> InputResult {
        self.move_list(duration_ms.max(50), "nothing scrollable under the swipe", scroll)
    }

    /// A scroll (a wheel, a page key): `scroll` says how the list under it moves, if any.
    pub fn scroll(&mut self, scroll: impl FnOnce(&Folio) -> Option<Scroll>) -> InputResult {
        self.move_list(SCROLL_MS, "nothing scrollable there", scroll)
    }

    fn move_list(
        &mut self,
        ms: u64,
        nothing_there: &str,
        scroll: impl FnOnce(&Folio) -> Option<Scroll>,
    ) -> InputResult {
        self.inputs += 1;
        self.advance(ms);
        if self.process != Process::Foreground {
            return InputResult::noted("swipe on the launcher");
        }
        let Some(Scroll { by, max }) = scroll(self) else {
            return InputResult::noted(nothing_there);
        };
        let offset = match self.session.route {
            Route::Home => &mut self.session.home_scroll,
            _ => &mut self.session.ledger_scroll,
        };
        let before = *offset;
        *offset = (*offset + by).clamp(0, max);
        let moved = *offset != before;
        self.probe(if moved {
            "list.scroll"
        } else {
            "list.scroll.at_end"
        });
        self.settle();
        InputResult::delivered()
    }

    pub fn press_key(&mut self, key: Key) -> InputResult {
        self.inputs += 1;
        self.advance(KEY_MS);
        if self.process != Process::Foreground {
            return InputResult::noted("the launcher ignores keys");
        }
        match key {
            // Android's key maps fall back to Back for Escape.
            Key::Back | Key::Escape => self.back(),
            Key::Home => {
                self.probe("app.background.home_key");
                self.move_to_background();
            }
            Key::Enter => self.enter(),
            Key::Tab => self.next_field(),
            Key::Up | Key::Down | Key::Left | Key::Right => {
                self.probe("key.arrow");
            }
            // A key for a text field with none focused goes to the screen, which ignores it.
            Key::Backspace | Key::Delete | Key::Space if self.session.focused.is_none() => {
                self.probe("key.no_focus");
                return InputResult::noted("no focused text field");
            }
            // The cursor is always at the end of the text: Backspace deletes the last
            // character, Delete has nothing after it; both delete a selected text whole.
            Key::Backspace => {
                self.probe("key.backspace");
                return self.edit_focused(|value| {
                    value.pop();
                });
            }
            Key::Delete => {
                self.probe("key.delete");
                if !self.session.selected_all {
                    return InputResult::noted("nothing after the cursor to delete");
                }
                return self.edit_focused(|_| {});
            }
            Key::Space => return self.edit_focused(|value| value.push(' ')),
            // Scrolling a page is the touch screen's (`device::press_key`): here nothing scrolls.
            Key::PageUp | Key::PageDown => {
                self.probe("key.page");
                return InputResult::noted("nothing scrollable on this screen");
            }
        }
        self.settle();
        InputResult::delivered()
    }

    /// The system's back, as the Back key gives it.
    pub fn system_back(&mut self) -> InputResult {
        self.press_key(Key::Back)
    }

    /// Restarts the app's process with its data kept, as swiping it away and opening it
    /// again does: what a page reload means on this Android-like device.
    pub fn reload(&mut self) -> InputResult {
        self.probe("app.reload");
        self.restart(false, "app process restarted by a reload");
        InputResult::delivered()
    }

    /// Lets device time pass (a spec's Wait).
    pub fn sleep(&mut self, duration_ms: u64) -> InputResult {
        self.advance(duration_ms);
        InputResult::delivered()
    }

    /// The UI never animates, so it is idle at once; a frame's worth of time passes.
    pub fn wait_for_idle(&mut self) -> bool {
        self.advance(IDLE_MS);
        true
    }

    /// Starts the app, restarting it if it is running; `clear_state` wipes its data.
    pub fn launch(&mut self, clear_state: bool) {
        self.restart(clear_state, "app process restarted by Launch");
    }

    fn restart(&mut self, clear_state: bool, reason: &str) {
        self.inputs += 1;
        if self.process != Process::Dead {
            self.die(reason.into());
        }
        if clear_state {
            self.persisted = Persisted::fresh();
            self.probe("app.start.clear_state");
        }
        self.advance(COLD_START_MS);
        self.start_process();
    }

    pub fn terminate(&mut self) {
        self.inputs += 1;
        self.advance(KEY_MS);
        if self.process != Process::Dead {
            self.log(LogLevel::Info, "ActivityManager", "Force stopping app.folio");
            self.die("app terminated by the driver".into());
        }
    }

    // ----- what the app shows and reports -------------------------------

    /// The figure the home screen shows as the total balance.
    pub fn displayed_total(&self) -> f64 {
        if self.bugs.has(Bug::StaleTotal) {
            self.session.cached_total
        } else {
            self.persisted.total_cents()
        }
    }

    pub fn active_account(&self) -> Option<&Account> {
        self.persisted.account(self.session.active_account.as_deref()?)
    }

    /// The active account's ledger as listed on screen, newest first.
    pub fn ledger_rows(&self) -> Vec<LedgerRow> {
        let Some(account) = self.active_account() else {
            return Vec::new();
        };
        let mut rows = Vec::new();
        for txn in account.txns.iter().rev() {
            let row = LedgerRow {
                txn: txn.clone(),
                account_id: account.id.clone(),
            };
            if let Some((account_id, txn_id)) = &self.session.duplicated_row
                && *account_id == account.id
                && *txn_id == txn.id
            {
                rows.push(row.clone());
            }
            rows.push(row);
        }
        rows
    }

    /// Whether a session exists (the user signed in and has not logged out).
    pub fn logged_in(&self) -> bool {
        self.persisted.logged_in
    }

    /// The account of the ledger or add-transaction screen.
    fn shown_account(&self) -> Option<&Account> {
        match self.session.route {
            Route::Ledger | Route::AddTxn => self.active_account(),
            _ => None,
        }
    }

    /// The snapshots Folio registers with the SDK: those of the reference Folio app
    /// (`docs/simulator.md`, "Snapshots"), then the simulator's extras.
    pub fn snapshots(&self) -> Map<String, Value> {
        let session = &self.session;
        let accounts: Vec<Value> = self
            .persisted
            .accounts
            .iter()
            .map(|account| {
                json!({
                    "id": account.id,
                    "name": account.name,
                    "balance": cents_json(account.balance_cents()),
                    "txnCount": account.txns.len(),
                })
            })
            .collect();
        let shown = self.shown_account();
        let rows: Vec<Value> = if shown.is_some() {
            self.ledger_rows()
                .iter()
                .map(|row| {
                    json!({
                        "id": row.txn.id,
                        "accountId": row.account_id,
                        "type": row.txn.kind.name(),
                        "amount": cents_json(row.txn.amount_cents),
                        "signed": cents_json(row.txn.signed_cents()),
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        let shown_id = || shown.map_or(Value::Null, |account| account.id.clone().into());
        let on_txn_form = session.route == Route::AddTxn && shown.is_some();
        let error = |form| Value::from(session.errors.get(&form).cloned().unwrap_or_default());
        let logged_in = self.logged_in();
        let mut snapshots = Map::new();
        snapshots.insert("logged_in".into(), logged_in.into());
        snapshots.insert(
            "auth_status".into(),
            if logged_in { "logged-in" } else { "logged-out" }.into(),
        );
        snapshots.insert("route".into(), session.route.name().into());
        snapshots.insert("account_count".into(), self.persisted.accounts.len().into());
        snapshots.insert("accounts".into(), accounts.into());
        snapshots.insert("total_balance".into(), cents_json(self.displayed_total()));
        snapshots.insert("active_account_id".into(), shown_id());
        snapshots.insert("ledger_rows".into(), rows.into());
        snapshots.insert(
            "ledger_balance".into(),
            cents_json(shown.map_or(0.0, Account::balance_cents)),
        );
        snapshots.insert(
            "focused_input".into(),
            session.focused.map_or(Value::Null, |field| field.desc().into()),
        );
        snapshots.insert(
            "txn_form_type".into(),
            if on_txn_form {
                session.kind.name().into()
            } else {
                Value::Null
            },
        );
        snapshots.insert(
            "txn_form_account_id".into(),
            if on_txn_form { shown_id() } else { Value::Null },
        );
        snapshots.insert("login_error".into(), error(Form::Login));
        snapshots.insert("add_account_error".into(), error(Form::Account));
        snapshots.insert("txn_error".into(), error(Form::Txn));
        // The simulator's extra: the authenticating phase of a valid login.
        snapshots.insert("auth_pending".into(), session.auth_until.is_some().into());
        snapshots
    }

    /// What the next STATE reports: the snapshots, and everything since the previous STATE.
    pub fn take_state(&mut self) -> StateReport {
        let logs = self.logs[self.state_log_cursor.min(self.logs.len())..].to_vec();
        self.state_log_cursor = self.logs.len();
        StateReport {
            snapshots: self.snapshots(),
            exceptions: std::mem::take(&mut self.pending_exceptions),
            logs,
            coverage: std::mem::take(&mut self.coverage)
                .into_iter()
                .map(String::from)
                .collect(),
        }
    }

    /// Log entries strictly after `since_ms` at `min_level` or above.
    pub fn logs_after(&self, since_ms: u64, min_level: LogLevel) -> Vec<LogEntry> {
        self.logs
            .iter()
            .filter(|entry| entry.time > since_ms && entry.level >= min_level)
            .cloned()
            .collect()
    }

    // ----- behaviour ----------------------------------------------------

    fn activate(&mut self, action: Activate) {
        match action {
            Activate::Focus(field) => self.focus(field),
            Activate::SubmitLogin => self.submit_login(),
            Activate::AddAccount => {
                self.probe("home.add_account");
                self.navigate(Route::AddAccount);
            }
            Activate::Logout => self.logout(),
            Activate::OpenAccount(id) => {
                self.probe("home.open_account");
                self.session.active_account = Some(id);
                self.session.ledger_scroll = 0;
                self.navigate(Route::Ledger);
            }
            Activate::SubmitAccount => self.submit_account(),
            Activate::AddTxn => {
                self.probe("ledger.add_txn");
                self.navigate(Route::AddTxn);
            }
            Activate::SetKind(kind) => {
                self.probe(match kind {
                    Kind::Credit => "txn.kind.credit",
                    Kind::Debit => "txn.kind.debit",
                });
                self.session.kind = kind;
            }
            Activate::SubmitTxn => self.submit_txn(),
            Activate::Back => self.back(),
            Activate::LauncherIcon => self.open_from_launcher(),
        }
    }

    fn back(&mut self) {
        match self.session.route {
            Route::Login | Route::Home => {
                self.probe("nav.back.exit");
                self.move_to_background();
            }
            Route::AddAccount => {
                self.probe("nav.back.add_account");
                self.navigate(Route::Home);
            }
            Route::Ledger => {
                self.probe("nav.back.ledger");
                self.session.active_account = None;
                self.navigate(Route::Home);
            }
            Route::AddTxn => {
                self.probe("nav.back.add_txn");
                self.navigate(Route::Ledger);
            }
        }
    }

    fn enter(&mut self) {
        match self.session.focused {
            Some(Field::Email | Field::Password) => {
                self.probe("key.enter.submit");
                self.submit_login();
            }
            Some(Field::AccountName) => {
                self.probe("key.enter.submit");
                self.submit_account();
            }
            Some(Field::Amount | Field::Note) => {
                self.probe("key.enter.submit");
                self.submit_txn();
            }
            None => self.probe("key.enter.no_focus"),
        }
    }

    fn next_field(&mut self) {
        let order: &[Field] = match self.session.route {
            Route::Login => &[Field::Email, Field::Password],
            Route::AddAccount => &[Field::AccountName],
            Route::AddTxn => &[Field::Amount, Field::Note],
            Route::Home | Route::Ledger => &[],
        };
        if order.is_empty() {
            self.probe("key.tab.no_fields");
            return;
        }
        let next = match self
            .session
            .focused
            .and_then(|field| order.iter().position(|f| *f == field))
        {
            Some(index) => order[(index + 1) % order.len()],
            None => order[0],
        };
        self.probe("key.tab.focus");
        self.focus(next);
    }

    fn focus(&mut self, field: Field) {
        self.probe("field.focus");
        self.session.focused = Some(field);
        self.session.selected_all = !self.field_mut(field).is_empty();
    }

    fn navigate(&mut self, route: Route) {
        let from = self.session.route;
        let session = &mut self.session;
        session.focused = None;
        session.errors.clear();
        match from {
            Route::AddAccount => session.account_name.clear(),
            Route::AddTxn => {
                session.amount.clear();
                session.note.clear();
                session.kind = Kind::Debit;
            }
            _ => {}
        }
        session.route = route;
        if route == Route::Home {
            self.refresh_total();
        }
        self.log(
            LogLevel::Info,
            "Folio/Nav",
            format!("navigate {} -> {}", from.name(), route.name()),
        );
    }

    fn refresh_total(&mut self) {
        if self.session.skip_total_refresh {
            // The planted bug: the debit's change notification was dropped, so
            // this entry to home renders the cached figure.
            self.session.skip_total_refresh = false;
            self.probe("home.total.cached");
        } else {
            self.session.cached_total = self.persisted.total_cents();
            self.probe("home.total.refreshed");
        }
    }

    fn submit_login(&mut self) {
        if self.session.route != Route::Login {
            return;
        }
        if self.session.auth_until.is_some() {
            self.probe("login.submit.while_pending");
            return;
        }
        self.session.errors.remove(&Form::Login);
        let email = self.session.email.trim().to_lowercase();
        if email.is_empty() || self.session.password.is_empty() {
            self.probe(if email.is_empty() {
                "login.empty_email"
            } else {
                "login.empty_password"
            });
            self.log(LogLevel::Warn, "Folio/Auth", "sign-in rejected: missing fields");
            self.show_error(Form::Login, LOGIN_FIELDS_EMPTY);
            return;
        }
        if email != DEMO_EMAIL || self.session.password != DEMO_PASSWORD {
            self.probe(if email == DEMO_EMAIL {
                "login.wrong_password"
            } else {
                "login.unknown_email"
            });
            self.log(
                LogLevel::Warn,
                "Folio/Auth",
                format!("sign-in failed for {email}"),
            );
            self.session.password.clear();
            self.show_error(Form::Login, LOGIN_INVALID);
            return;
        }
        let nth = self.valid_logins;
        self.valid_logins += 1;
        let slow = self.bugs.has(Bug::SlowLogin) && nth % 3 == self.slow_phase;
        self.probe(if slow { "login.valid.slow" } else { "login.valid" });
        self.session.focused = None;
        self.session.auth_until = Some(self.clock_ms + if slow { SLOW_AUTH_MS } else { AUTH_MS });
        self.log(LogLevel::Info, "Folio/Auth", format!("authenticating {email}"));
    }

    fn finish_login(&mut self, at: u64) {
        self.session.auth_until = None;
        self.persisted.logged_in = true;
        self.session.password.clear();
        self.log_at(at, LogLevel::Info, "Folio/Auth", "signed in");
        if self.bugs.has(Bug::DeepLedgerDuplication) && self.session.logged_out {
            let deep: Vec<usize> = (0..self.persisted.accounts.len())
                .filter(|&index| self.persisted.accounts[index].txns.len() >= 2)
                .collect();
            if deep.len() >= 3 {
                // The planted bug: re-syncing the ledger cache after a re-login
                // merges one cached row into an account's list a second time.
                let account = &self.persisted.accounts[deep[self.rng.random_range(0..deep.len())]];
                let txn = &account.txns[self.rng.random_range(0..account.txns.len())];
                self.session.duplicated_row = Some((account.id.clone(), txn.id.clone()));
                self.probe("login.ledger_cache.merge");
            }
        }
        self.probe("login.signed_in");
        self.navigate(Route::Home);
    }

    fn logout(&mut self) {
        self.probe("home.logout");
        self.persisted.logged_in = false;
        self.session.logged_out = true;
        self.session.duplicated_row = None;
        self.session.email.clear();
        self.session.password.clear();
        self.session.active_account = None;
        self.session.home_scroll = 0;
        self.log(LogLevel::Info, "Folio/Auth", "signed out");
        self.navigate(Route::Login);
    }

    fn submit_account(&mut self) {
        if self.session.route != Route::AddAccount {
            return;
        }
        let raw = self.session.account_name.clone();
        let name = raw.trim();
        let error = if name.is_empty() {
            self.probe("account.empty_name");
            Some(ACCOUNT_NAME_REQUIRED)
        } else if name.chars().count() > MAX_ACCOUNT_NAME_CHARS {
            self.probe("account.name_too_long");
            Some(ACCOUNT_NAME_TOO_LONG)
        } else if self.is_duplicate_name(&raw) {
            self.probe("account.duplicate_name");
            Some(ACCOUNT_NAME_TAKEN)
        } else {
            None
        };
        if let Some(message) = error {
            self.log(
                LogLevel::Warn,
                "Folio/Form",
                format!("new account rejected: {message}"),
            );
            self.show_error(Form::Account, message);
            return;
        }
        // The planted bug keeps the name as typed, spaces and all.
        let stored = if self.bugs.has(Bug::DuplicateAccountNames) {
            raw.clone()
        } else {
            name.to_owned()
        };
        let id = format!("a{}", self.persisted.next_account);
        self.persisted.next_account += 1;
        self.persisted.accounts.push(Account {
            id: id.clone(),
            name: stored,
            txns: Vec::new(),
        });
        self.probe("account.create");
        self.log(LogLevel::Info, "Folio/Form", format!("account {id} created"));
        self.navigate(Route::Home);
    }

    fn is_duplicate_name(&self, raw: &str) -> bool {
        let existing = self
            .persisted
            .accounts
            .iter()
            .map(|account| account.name.as_str());
        if self.bugs.has(Bug::DuplicateAccountNames) {
            // The planted bug: an exact comparison of the text as typed.
            existing.into_iter().any(|name| name == raw)
        } else {
            let wanted = normalize_name(raw);
            existing.into_iter().any(|name| normalize_name(name) == wanted)
        }
    }

    fn submit_txn(&mut self) {
        if self.session.route != Route::AddTxn {
            return;
        }
        let amount_cents = match parse_amount(&self.session.amount, self.bugs.has(Bug::FloatCents)) {
            Ok(cents) => cents,
            Err(error) => {
                let (probe, message) = match error {
                    AmountError::Empty => ("txn.amount.empty", AMOUNT_INVALID),
                    AmountError::Invalid => ("txn.amount.invalid", AMOUNT_INVALID),
                    AmountError::TooPrecise => ("txn.amount.too_precise", AMOUNT_INVALID),
                    AmountError::Zero => ("txn.amount.zero", AMOUNT_NOT_POSITIVE),
                };
                self.probe(probe);
                self.log(
                    LogLevel::Warn,
                    "Folio/Form",
                    format!("transaction rejected: {message}"),
                );
                self.show_error(Form::Txn, message);
                return;
            }
        };
        // The note is trimmed and silently cut to its limit.
        let trimmed = self.session.note.trim().to_owned();
        if trimmed.chars().count() > MAX_NOTE_CHARS {
            self.probe("txn.note.cut");
        }
        let note: String = trimmed.chars().take(MAX_NOTE_CHARS).collect();
        let note_chars = note.chars().count();
        if self.bugs.has(Bug::CrashOnLongNote) && note_chars > CRASHING_NOTE_CHARS {
            // The planted bug: the row preview cuts the note one character too far.
            self.crash(
                "java.lang.StringIndexOutOfBoundsException",
                format!("begin 0, end {}, length {}", note_chars + 1, note_chars),
                "java.lang.StringIndexOutOfBoundsException\n\
                 \tat java.lang.String.substring(String.java:2060)\n\
                 \tat app.folio.ledger.NotePreview.ellipsize(NotePreview.kt:18)\n\
                 \tat app.folio.ledger.AddTransactionViewModel.submit(AddTransactionViewModel.kt:74)",
            );
            return;
        }
        let Some(account_id) = self.session.active_account.clone() else {
            return;
        };
        let kind = self.session.kind;
        let id = format!("t{}", self.persisted.next_txn);
        self.persisted.next_txn += 1;
        let Some(account) = self
            .persisted
            .accounts
            .iter_mut()
            .find(|account| account.id == account_id)
        else {
            return;
        };
        account.txns.push(Txn {
            id: id.clone(),
            amount_cents,
            kind,
            note,
        });
        if amount_cents.fract() != 0.0 {
            self.probe("txn.amount.fractional_cents");
        }
        if note_chars > 0 {
            self.probe("txn.note.present");
        }
        match kind {
            Kind::Credit => {
                self.probe("txn.submit.credit");
                self.refresh_total();
            }
            Kind::Debit => {
                self.probe("txn.submit.debit");
                if self.bugs.has(Bug::StaleTotal) {
                    self.session.skip_total_refresh = true;
                }
            }
        }
        self.log(
            LogLevel::Info,
            "Folio/Form",
            format!(
                "{} {id} of {} cents added to {account_id}",
                kind.name(),
                amount_cents
            ),
        );
        self.navigate(Route::Ledger);
    }

    fn show_error(&mut self, form: Form, message: &str) {
        self.probe("form.error.shown");
        self.session.errors.insert(form, message.to_owned());
    }

    fn field_mut(&mut self, field: Field) -> &mut String {
        let session = &mut self.session;
        match field {
            Field::Email => &mut session.email,
            Field::Password => &mut session.password,
            Field::AccountName => &mut session.account_name,
            Field::Amount => &mut session.amount,
            Field::Note => &mut session.note,
        }
    }

    fn move_to_background(&mut self) {
        self.process = Process::Background;
        self.session.focused = None;
        self.log(LogLevel::Info, "ActivityManager", "app.folio moved to background");
    }

    fn open_from_launcher(&mut self) {
        match self.process {
            Process::Background => {
                self.probe("app.start.warm");
                self.advance(WARM_START_MS);
                self.process = Process::Foreground;
                self.log(LogLevel::Info, "ActivityManager", "app.folio moved to foreground");
            }
            Process::Dead => {
                self.advance(COLD_START_MS);
                self.start_process();
            }
            Process::Foreground => {}
        }
    }

    fn start_process(&mut self) {
        self.generation += 1;
        self.process = Process::Foreground;
        self.session = Session::new(&self.persisted);
        self.log(
            LogLevel::Info,
            "ActivityManager",
            "Start proc app.folio for activity MainActivity",
        );
        self.probe("app.start.cold");
    }

    fn crash(&mut self, class: &str, message: String, stack: &str) {
        self.probe("app.crash");
        self.pending_exceptions.push(ExceptionInfo {
            class: class.to_owned(),
            message: message.clone(),
            stack: stack.to_owned(),
            time: self.clock_ms,
        });
        self.log(
            LogLevel::Error,
            "AndroidRuntime",
            format!("FATAL EXCEPTION: main\nProcess: app.folio\n{class}: {message}\n{stack}"),
        );
        self.log(LogLevel::Info, "ActivityManager", "Process app.folio has died");
        self.die(format!("crash: {class}: {message}"));
    }

    fn die(&mut self, reason: String) {
        self.process = Process::Dead;
        self.last_death = Some((self.generation, reason));
    }

    /// Moves the clock on and fires the timers that fall due.
    fn advance(&mut self, ms: u64) {
        let target = self.clock_ms.saturating_add(ms);
        if let Some(until) = self.session.auth_until
            && until <= target
        {
            self.clock_ms = self.clock_ms.max(until);
            self.finish_login(until);
        }
        self.clock_ms = target;
        self.settle();
    }

    /// Applies the rules that hold after every input: focus stays on the screen's own fields.
    fn settle(&mut self) {
        if self
            .session
            .focused
            .is_some_and(|field| field.route() != self.session.route)
        {
            self.session.focused = None;
        }
    }

    /// Records coverage probe `id` (docs/simulator.md lists them).
    pub fn probe(&mut self, id: &'static str) {
        self.coverage.insert(id);
    }

    fn log(&mut self, level: LogLevel, tag: &str, message: impl Into<String>) {
        self.log_at(self.clock_ms, level, tag, message);
    }

    fn log_at(&mut self, time: u64, level: LogLevel, tag: &str, message: impl Into<String>) {
        if self.logs.len() >= MAX_LOGS {
            let dropped = MAX_LOGS / 4;
            self.logs.drain(..dropped);
            self.state_log_cursor = self.state_log_cursor.saturating_sub(dropped);
        }
        self.logs.push(LogEntry {
            time,
            level,
            tag: tag.to_owned(),
            message: message.into(),
        });
    }
}

fn normalize_name(name: &str) -> String {
    name.trim().to_lowercase()
}

/// Cents as JSON: an integer when whole (always, without `float-cents`).
pub fn cents_json(cents: f64) -> Value {
    if cents.fract() == 0.0 && cents.abs() < 9.0e15 {
        Value::from(cents as i64)
    } else {
        Value::from(cents)
    }
}

/// Cents as the app displays them, e.g. `$1,234.50` or `-$3.00`.
pub fn format_money(cents: f64) -> String {
    let sign = if cents < 0.0 { "-" } else { "" };
    let whole_cents = cents.abs().round() as u64;
    let dollars = (whole_cents / 100).to_string();
    let mut grouped = String::new();
    for (index, digit) in dollars.chars().enumerate() {
        if index > 0 && (dollars.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}${grouped}.{:02}", whole_cents % 100)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AmountError {
    Empty,
    /// Not `^\d+(\.\d{1,2})?$` once commas are removed and the text trimmed.
    Invalid,
    /// More than two decimals (accepted as fractional cents under `float-cents`).
    TooPrecise,
    Zero,
}

/// Parses a typed amount into cents: commas removed, trimmed, then `^\d+(\.\d{1,2})?$`.
/// With `fractional` (the planted bug `float-cents`) any number of decimals is accepted and
/// kept as fractional cents. Amounts beyond what a cent count can hold exactly are invalid.
fn parse_amount(text: &str, fractional: bool) -> Result<f64, AmountError> {
    let cleaned: String = text.chars().filter(|&c| c != ',').collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() {
        return Err(AmountError::Empty);
    }
    let (whole, fraction) = match cleaned.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (cleaned, None),
    };
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if !digits(whole) || fraction.is_some_and(|fraction| !digits(fraction)) {
        return Err(AmountError::Invalid);
    }
    let fraction = fraction.unwrap_or("");
    if fraction.len() > 2 && !fractional {
        return Err(AmountError::TooPrecise);
    }
    let whole: u64 = whole.parse().map_err(|_| AmountError::Invalid)?;
    // Cents stay exact in an f64 up to 2^53; a ledger has no use for more.
    if whole > 9_000_000_000_000 {
        return Err(AmountError::Invalid);
    }
    let mut cents = whole as f64 * 100.0;
    for (position, digit) in fraction.chars().take(8).enumerate() {
        let value = f64::from(digit.to_digit(10).unwrap_or(0));
        cents += value * 10f64.powi(1 - position as i32);
    }
    if fraction.len() > 2 {
        // Rounded to the digits typed, so 1.005 becomes 100.5 rather than 100.49999.
        let scale = 10f64.powi(fraction.len().min(8) as i32 - 2);
        cents = (cents * scale).round() / scale;
    }
    if cents == 0.0 {
        return Err(AmountError::Zero);
    }
    Ok(cents)
}

#[cfg(test)]
#[path = "folio_tests.rs"]
mod tests;
