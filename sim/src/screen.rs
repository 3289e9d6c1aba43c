//! Folio's screens as an accessibility tree with bounds on a 1080×2400
//! screen, and tap resolution by those bounds.

use super::folio::{Field, Folio, Kind, PACKAGE, Process, Route, SCREEN_HEIGHT, SCREEN_WIDTH, format_money};
use uatu_device::model::{Bounds, Node, Point};

const LAUNCHER_PACKAGE: &str = "com.android.launcher3";
const HOME_LIST: Bounds = Bounds {
    left: 0,
    top: 600,
    right: SCREEN_WIDTH,
    bottom: 2100,
};
const LEDGER_LIST: Bounds = Bounds {
    left: 0,
    top: 520,
    right: SCREEN_WIDTH,
    bottom: 2100,
};
const CARD_HEIGHT: i32 = 210;
const CARD_PITCH: i32 = 230;
const ROW_HEIGHT: i32 = 150;
const ROW_PITCH: i32 = 160;

/// What tapping a widget does.
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

/// How the screenshot draws a widget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Root,
    Launcher,
    Toolbar,
    ToolbarTitle,
    Title,
    Text,
    Muted,
    Error,
    Credit,
    Debit,
    Field,
    Button,
    ToolbarButton,
    Card,
    Row,
    List,
    RadioGroup,
    Radio,
    Icon,
    Progress,
}

/// One element of a screen: its accessibility node plus how it is drawn and what a tap does.
#[derive(Debug, Clone)]
pub struct Widget {
    /// The node, without children (those are in `children`).
    pub node: Node,
    pub role: Role,
    pub action: Option<Activate>,
    /// Placeholder drawn in an empty text field.
    pub hint: &'static str,
    /// The accent colour of the screen, for the toolbar and primary buttons.
    pub accent: [u8; 3],
    /// Content height of a scrollable list.
    pub content_height: i32,
    pub children: Vec<Widget>,
}

impl Widget {
    pub fn to_node(&self) -> Node {
        let mut node = self.node.clone();
        node.children = self.children.iter().map(Widget::to_node).collect();
        node
    }

    fn push(&mut self, child: Widget) -> &mut Widget {
        self.children.push(child);
        let last = self.children.len() - 1;
        &mut self.children[last]
    }
}

/// The deepest clickable, enabled widget containing `point`, and what tapping it does.
pub fn resolve_tap(root: &Widget, point: Point) -> Option<Activate> {
    fn deepest(widget: &Widget, point: Point) -> Option<&Widget> {
        if !widget.node.bounds.contains(point) {
            return None;
        }
        // Later siblings are drawn on top, so they receive the touch first.
        if let Some(hit) = widget
            .children
            .iter()
            .rev()
            .find_map(|child| deepest(child, point))
        {
            return Some(hit);
        }
        (widget.node.clickable && widget.node.enabled).then_some(widget)
    }
    deepest(root, point)?.action.clone()
}

/// The scrollable list under `point`: its bounds and content height.
pub fn scrollable_at(root: &Widget, point: Point) -> Option<(Bounds, i32)> {
    let mut stack = vec![root];
    while let Some(widget) = stack.pop() {
        if widget.node.scrollable && widget.node.bounds.contains(point) {
            return Some((widget.node.bounds, widget.content_height));
        }
        stack.extend(widget.children.iter());
    }
    None
}

/// The widget tree of what the screen shows now.
pub fn build(folio: &Folio) -> Widget {
    if folio.process != Process::Foreground {
        return launcher();
    }
    let accent = accent(folio.session.route);
    let mut root = widget(
        Role::Root,
        "android.widget.FrameLayout",
        "",
        "",
        "",
        full_screen(),
    );
    root.accent = accent;
    match folio.session.route {
        Route::Login => login(folio, &mut root),
        Route::Home => home(folio, &mut root),
        Route::AddAccount => add_account(folio, &mut root),
        Route::Ledger => ledger(folio, &mut root),
        Route::AddTxn => add_txn(folio, &mut root),
    }
    set_accent(&mut root, accent);
    root
}

/// The colour that tells the screens apart at a glance.
pub fn accent(route: Route) -> [u8; 3] {
    match route {
        Route::Login => [57, 73, 171],
        Route::Home => [0, 121, 107],
        Route::AddAccount => [230, 100, 0],
        Route::Ledger => [46, 125, 50],
        Route::AddTxn => [106, 27, 154],
    }
}

fn set_accent(widget: &mut Widget, accent: [u8; 3]) {
    widget.accent = accent;
    for child in &mut widget.children {
        set_accent(child, accent);
    }
}

fn launcher() -> Widget {
    let mut root = widget(
        Role::Launcher,
        "android.widget.FrameLayout",
        "",
        "",
        "",
        full_screen(),
    );
    root.node.package = LAUNCHER_PACKAGE.into();
    let mut icon = widget(
        Role::Icon,
        "android.widget.TextView",
        "com.android.launcher3:id/icon",
        "Folio",
        "Folio",
        bounds(390, 1000, 690, 1300),
    );
    icon.node.package = LAUNCHER_PACKAGE.into();
    icon.node.clickable = true;
    icon.action = Some(Activate::LauncherIcon);
    root.push(icon);
    root
}

fn toolbar<'a>(root: &'a mut Widget, title: &str, back: bool) -> &'a mut Widget {
    let bar = root.push(widget(
        Role::Toolbar,
        "android.view.ViewGroup",
        "toolbar",
        "",
        "",
        bounds(0, 0, SCREEN_WIDTH, 220),
    ));
    let title_left = if back { 180 } else { 60 };
    bar.push(widget(
        Role::ToolbarTitle,
        "android.widget.TextView",
        "toolbar_title",
        "",
        title,
        bounds(title_left, 90, 1060, 210),
    ));
    if back {
        let button = bar.push(widget(
            Role::ToolbarButton,
            "android.widget.ImageButton",
            "back",
            "Back",
            "",
            bounds(20, 100, 160, 200),
        ));
        clickable(button, Activate::Back);
    }
    bar
}

fn login(folio: &Folio, root: &mut Widget) {
    let session = &folio.session;
    toolbar(root, "Sign in", false);
    root.push(widget(
        Role::Title,
        "android.widget.TextView",
        "app_name",
        "",
        "Folio",
        bounds(60, 300, 1020, 430),
    ));
    root.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "tagline",
        "",
        "Your personal ledger",
        bounds(60, 440, 1020, 510),
    ));
    root.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "email_label",
        "",
        "Email",
        bounds(80, 590, 1000, 645),
    ));
    text_field(
        folio,
        root,
        Field::Email,
        "email",
        &session.email,
        "you@example.com",
        bounds(80, 650, 1000, 790),
    );
    field_error(
        folio,
        root,
        Field::Email,
        "email_error",
        bounds(80, 795, 1000, 850),
    );
    root.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "password_label",
        "",
        "Password",
        bounds(80, 865, 1000, 920),
    ));
    let masked = "•".repeat(session.password.chars().count());
    text_field(
        folio,
        root,
        Field::Password,
        "password",
        &masked,
        "password",
        bounds(80, 925, 1000, 1065),
    );
    field_error(
        folio,
        root,
        Field::Password,
        "login_error",
        bounds(80, 1070, 1000, 1125),
    );
    let pending = session.auth_until.is_some();
    let submit = root.push(widget(
        Role::Button,
        "android.widget.Button",
        "sign_in",
        "login_submit",
        "Sign in",
        bounds(80, 1180, 1000, 1320),
    ));
    clickable(submit, Activate::SubmitLogin);
    submit.node.enabled = !pending;
    if pending {
        root.push(widget(
            Role::Progress,
            "android.widget.ProgressBar",
            "progress",
            "",
            "",
            bounds(490, 1370, 590, 1470),
        ));
        root.push(widget(
            Role::Text,
            "android.widget.TextView",
            "auth_status",
            "",
            "Signing in...",
            bounds(80, 1490, 1000, 1560),
        ));
    }
    root.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "demo_hint",
        "",
        "Demo: demo@folio.app/ledger123",
        bounds(40, 2200, 1040, 2270),
    ));
}

fn home(folio: &Folio, root: &mut Widget) {
    let bar = toolbar(root, "Accounts", false);
    let logout = bar.push(widget(
        Role::ToolbarButton,
        "android.widget.Button",
        "logout",
        "logout_button",
        "Log out",
        bounds(760, 100, 1060, 200),
    ));
    clickable(logout, Activate::Logout);

    let accounts = &folio.persisted.accounts;
    let card = root.push(widget(
        Role::Card,
        "android.view.ViewGroup",
        "total_card",
        "",
        "",
        bounds(40, 250, 1040, 560),
    ));
    card.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "total_label",
        "",
        "Total balance",
        bounds(80, 275, 1000, 340),
    ));
    card.push(widget(
        Role::Title,
        "android.widget.TextView",
        "total_balance",
        "",
        &format_money(folio.displayed_total()),
        bounds(80, 345, 1000, 465),
    ));
    let count = match accounts.len() {
        1 => "1 account".to_owned(),
        n => format!("{n} accounts"),
    };
    card.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "account_count",
        "",
        &count,
        bounds(80, 475, 1000, 535),
    ));

    let content_height = 20 + accounts.len() as i32 * CARD_PITCH;
    let list = root.push(widget(
        Role::List,
        "androidx.recyclerview.widget.RecyclerView",
        "accounts",
        "",
        "",
        HOME_LIST,
    ));
    list.content_height = content_height;
    list.node.scrollable = content_height > HOME_LIST.bottom - HOME_LIST.top;
    if accounts.is_empty() {
        list.push(widget(
            Role::Muted,
            "android.widget.TextView",
            "empty",
            "",
            "No accounts yet. Add one below.",
            bounds(80, 700, 1000, 780),
        ));
    }
    for (index, account) in accounts.iter().enumerate() {
        let top = HOME_LIST.top + 20 + index as i32 * CARD_PITCH - folio.session.home_scroll;
        let Some(card_bounds) = clip(bounds(40, top, 1040, top + CARD_HEIGHT), HOME_LIST) else {
            continue;
        };
        let mut card = widget(
            Role::Card,
            "android.view.ViewGroup",
            "account_card",
            &format!("account_card:{}", account.id),
            "",
            card_bounds,
        );
        card.action = Some(Activate::OpenAccount(account.id.clone()));
        card.node.clickable = true;
        let balance = account.balance_cents();
        let txns = match account.txns.len() {
            1 => "1 transaction".to_owned(),
            n => format!("{n} transactions"),
        };
        let parts = [
            (
                Role::Text,
                "account_name",
                account.name.clone(),
                bounds(80, top + 25, 500, top + 105),
            ),
            (
                if balance < 0.0 { Role::Debit } else { Role::Credit },
                "account_balance",
                format_money(balance),
                bounds(480, top + 25, 1010, top + 105),
            ),
            (
                Role::Muted,
                "account_txn_count",
                txns,
                bounds(80, top + 120, 1000, top + 185),
            ),
        ];
        for (role, id, text, part) in parts {
            if let Some(part) = clip(part, card_bounds) {
                card.push(widget(role, "android.widget.TextView", id, "", &text, part));
            }
        }
        list.push(card);
    }
    let add = root.push(widget(
        Role::Button,
        "android.widget.Button",
        "add_account",
        "add_account_button",
        "+ Add account",
        bounds(40, 2140, 1040, 2300),
    ));
    clickable(add, Activate::AddAccount);
}

fn add_account(folio: &Folio, root: &mut Widget) {
    toolbar(root, "New account", true);
    root.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "account_name_label",
        "",
        "Account name",
        bounds(80, 290, 1000, 350),
    ));
    text_field(
        folio,
        root,
        Field::AccountName,
        "account_name",
        &folio.session.account_name,
        "e.g. Holiday fund",
        bounds(80, 360, 1000, 500),
    );
    field_error(
        folio,
        root,
        Field::AccountName,
        "account_name_error",
        bounds(80, 510, 1000, 570),
    );
    let submit = root.push(widget(
        Role::Button,
        "android.widget.Button",
        "create_account",
        "add_account_submit",
        "Create account",
        bounds(80, 640, 1000, 780),
    ));
    clickable(submit, Activate::SubmitAccount);
}

fn ledger(folio: &Folio, root: &mut Widget) {
    let Some(account) = folio.active_account() else {
        toolbar(root, "Ledger", true);
        return;
    };
    toolbar(root, &account.name, true);
    let card = root.push(widget(
        Role::Card,
        "android.view.ViewGroup",
        "balance_card",
        "",
        "",
        bounds(40, 250, 1040, 480),
    ));
    card.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "ledger_balance_label",
        "",
        "Balance",
        bounds(80, 270, 1000, 335),
    ));
    card.push(widget(
        Role::Title,
        "android.widget.TextView",
        "ledger_balance",
        "",
        &format_money(account.balance_cents()),
        bounds(80, 340, 1000, 460),
    ));

    let rows = folio.ledger_rows();
    let content_height = 10 + rows.len() as i32 * ROW_PITCH;
    let list = root.push(widget(
        Role::List,
        "androidx.recyclerview.widget.RecyclerView",
        "ledger",
        "",
        "",
        LEDGER_LIST,
    ));
    list.content_height = content_height;
    list.node.scrollable = content_height > LEDGER_LIST.bottom - LEDGER_LIST.top;
    if rows.is_empty() {
        list.push(widget(
            Role::Muted,
            "android.widget.TextView",
            "empty",
            "",
            "No transactions yet",
            bounds(80, 600, 1000, 680),
        ));
    }
    for (index, row) in rows.iter().enumerate() {
        let top = LEDGER_LIST.top + 10 + index as i32 * ROW_PITCH - folio.session.ledger_scroll;
        let Some(row_bounds) = clip(bounds(40, top, 1040, top + ROW_HEIGHT), LEDGER_LIST) else {
            continue;
        };
        let mut item = widget(
            Role::Row,
            "android.widget.LinearLayout",
            "ledger_row",
            &format!("ledger_row:{}", row.txn.id),
            "",
            row_bounds,
        );
        let (role, sign) = match row.txn.kind {
            Kind::Credit => (Role::Credit, "+"),
            Kind::Debit => (Role::Debit, "-"),
        };
        let note = if row.txn.note.is_empty() {
            "(no note)".to_owned()
        } else {
            row.txn.note.clone()
        };
        let parts = [
            (
                role,
                "txn_row_amount",
                format!("{sign}{}", format_money(row.txn.amount_cents)),
                bounds(80, top + 12, 640, top + 80),
            ),
            (
                Role::Muted,
                "txn_row_kind",
                row.txn.kind.name().to_owned(),
                bounds(700, top + 12, 1000, top + 80),
            ),
            (
                Role::Text,
                "txn_row_note",
                note,
                bounds(80, top + 85, 1000, top + 140),
            ),
        ];
        for (role, id, text, part) in parts {
            if let Some(part) = clip(part, row_bounds) {
                item.push(widget(role, "android.widget.TextView", id, "", &text, part));
            }
        }
        list.push(item);
    }
    let add = root.push(widget(
        Role::Button,
        "android.widget.Button",
        "add_txn",
        "add_txn_button",
        "+ Add transaction",
        bounds(40, 2140, 1040, 2300),
    ));
    clickable(add, Activate::AddTxn);
}

fn add_txn(folio: &Folio, root: &mut Widget) {
    let session = &folio.session;
    toolbar(root, "New transaction", true);
    root.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "amount_label",
        "",
        "Amount",
        bounds(80, 270, 1000, 330),
    ));
    text_field(
        folio,
        root,
        Field::Amount,
        "amount",
        &session.amount,
        "0.00",
        bounds(80, 340, 1000, 480),
    );
    field_error(
        folio,
        root,
        Field::Amount,
        "amount_error",
        bounds(80, 490, 1000, 550),
    );
    root.push(widget(
        Role::Muted,
        "android.widget.TextView",
        "note_label",
        "",
        "Note (optional)",
        bounds(80, 580, 1000, 640),
    ));
    text_field(
        folio,
        root,
        Field::Note,
        "note",
        &session.note,
        "What was it for?",
        bounds(80, 650, 1000, 790),
    );
    field_error(folio, root, Field::Note, "note_error", bounds(80, 800, 1000, 860));
    let group = root.push(widget(
        Role::RadioGroup,
        "android.widget.RadioGroup",
        "kind",
        "",
        "",
        bounds(80, 900, 1000, 1040),
    ));
    for (kind, id, desc, text, part) in [
        (
            Kind::Credit,
            "credit",
            "txn_credit",
            "Credit",
            bounds(80, 900, 520, 1040),
        ),
        (
            Kind::Debit,
            "debit",
            "txn_debit",
            "Debit",
            bounds(560, 900, 1000, 1040),
        ),
    ] {
        let radio = group.push(widget(
            Role::Radio,
            "android.widget.RadioButton",
            id,
            desc,
            text,
            part,
        ));
        clickable(radio, Activate::SetKind(kind));
        radio.node.checked = session.kind == kind;
    }
    let submit = root.push(widget(
        Role::Button,
        "android.widget.Button",
        "save",
        "txn_submit",
        "Save",
        bounds(80, 1120, 1000, 1260),
    ));
    clickable(submit, Activate::SubmitTxn);
}

#[allow(clippy::too_many_arguments)]
fn text_field(
    folio: &Folio,
    root: &mut Widget,
    field: Field,
    id: &str,
    text: &str,
    hint: &'static str,
    at: Bounds,
) {
    let input = root.push(widget(
        Role::Field,
        "android.widget.EditText",
        id,
        field.desc(),
        text,
        at,
    ));
    clickable(input, Activate::Focus(field));
    input.node.focused = folio.session.focused == Some(field);
    input.hint = hint;
}

fn field_error(folio: &Folio, root: &mut Widget, field: Field, id: &str, at: Bounds) {
    if let Some(message) = folio.session.form_errors.get(&field) {
        root.push(widget(
            Role::Error,
            "android.widget.TextView",
            id,
            "",
            message,
            at,
        ));
    }
}

fn clickable(widget: &mut Widget, action: Activate) {
    widget.node.clickable = true;
    widget.action = Some(action);
}

fn widget(role: Role, class: &str, id: &str, desc: &str, text: &str, at: Bounds) -> Widget {
    Widget {
        node: Node {
            id: if id.is_empty() {
                String::new()
            } else {
                format!("{PACKAGE}:id/{id}")
            },
            text: text.to_owned(),
            desc: desc.to_owned(),
            class_name: class.to_owned(),
            package: PACKAGE.to_owned(),
            enabled: true,
            bounds: at,
            ..Node::default()
        },
        role,
        action: None,
        hint: "",
        accent: [0, 0, 0],
        content_height: 0,
        children: Vec::new(),
    }
}

fn bounds(left: i32, top: i32, right: i32, bottom: i32) -> Bounds {
    Bounds {
        left,
        top,
        right,
        bottom,
    }
}

fn full_screen() -> Bounds {
    bounds(0, 0, SCREEN_WIDTH, SCREEN_HEIGHT)
}

/// The visible part of `inner` within `outer`, if any, as a scrolled list reports it.
fn clip(inner: Bounds, outer: Bounds) -> Option<Bounds> {
    let clipped = Bounds {
        left: inner.left.max(outer.left),
        top: inner.top.max(outer.top),
        right: inner.right.min(outer.right),
        bottom: inner.bottom.min(outer.bottom),
    };
    (!clipped.is_empty()).then_some(clipped)
}
