//! Folio's screens as an accessibility tree with bounds on a 1080×2400
//! screen, built from the model (the simulated device hit-tests it: `device.rs`).

use super::folio::{
    Activate, Field, Folio, Form, Kind, PACKAGE, Process, Route, SCREEN_HEIGHT, SCREEN_WIDTH, format_money,
};
use uatu_device::model::{Bounds, Hierarchy, Node, ScreenSize};

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

/// The accessibility tree of what the screen shows now.
pub fn hierarchy(folio: &Folio) -> Hierarchy {
    Hierarchy {
        root: build(folio).to_node(),
        screen: ScreenSize {
            width: SCREEN_WIDTH as u32,
            height: SCREEN_HEIGHT as u32,
        },
    }
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
    text_view(
        bar,
        Role::ToolbarTitle,
        "toolbar_title",
        title,
        bounds(title_left, 90, 1060, 210),
    );
    if back {
        let back = button(
            bar,
            Role::ToolbarButton,
            "back",
            "Back",
            "",
            bounds(20, 100, 160, 200),
            Activate::Back,
        );
        back.node.class_name = "android.widget.ImageButton".into();
    }
    bar
}

fn login(folio: &Folio, root: &mut Widget) {
    let session = &folio.session;
    toolbar(root, "Sign in", false);
    text_view(root, Role::Title, "app_name", "Folio", bounds(60, 300, 1020, 430));
    text_view(
        root,
        Role::Muted,
        "tagline",
        "Your personal ledger",
        bounds(60, 440, 1020, 510),
    );
    text_view(
        root,
        Role::Muted,
        "email_label",
        "Email",
        bounds(80, 590, 1000, 645),
    );
    text_field(
        folio,
        root,
        Field::Email,
        "email",
        &session.email,
        "you@example.com",
        bounds(80, 650, 1000, 790),
    );
    text_view(
        root,
        Role::Muted,
        "password_label",
        "Password",
        bounds(80, 865, 1000, 920),
    );
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
    form_error(
        folio,
        root,
        Form::Login,
        "login_error",
        bounds(80, 1070, 1000, 1125),
    );
    let pending = session.auth_until.is_some();
    let submit = button(
        root,
        Role::Button,
        "sign_in",
        "login_submit",
        "Sign in",
        bounds(80, 1180, 1000, 1320),
        Activate::SubmitLogin,
    );
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
        text_view(
            root,
            Role::Text,
            "auth_status",
            "Signing in...",
            bounds(80, 1490, 1000, 1560),
        );
    }
    text_view(
        root,
        Role::Muted,
        "demo_hint",
        "Demo: demo@folio.app/ledger123",
        bounds(40, 2200, 1040, 2270),
    );
}

fn home(folio: &Folio, root: &mut Widget) {
    let bar = toolbar(root, "Accounts", false);
    button(
        bar,
        Role::ToolbarButton,
        "logout",
        "logout_button",
        "Log out",
        bounds(760, 100, 1060, 200),
        Activate::Logout,
    );

    let accounts = &folio.persisted.accounts;
    let card = root.push(widget(
        Role::Card,
        "android.view.ViewGroup",
        "total_card",
        "",
        "",
        bounds(40, 250, 1040, 560),
    ));
    text_view(
        card,
        Role::Muted,
        "total_label",
        "Total balance",
        bounds(80, 275, 1000, 340),
    );
    text_view(
        card,
        Role::Title,
        "total_balance",
        &format_money(folio.displayed_total()),
        bounds(80, 345, 1000, 465),
    );
    let count = match accounts.len() {
        1 => "1 account".to_owned(),
        n => format!("{n} accounts"),
    };
    text_view(
        card,
        Role::Muted,
        "account_count",
        &count,
        bounds(80, 475, 1000, 535),
    );

    let cards = ListLayout {
        at: HOME_LIST,
        lead: 20,
        pitch: CARD_PITCH,
        height: CARD_HEIGHT,
    };
    let empty = ("No accounts yet. Add one below.", bounds(80, 700, 1000, 780));
    scrolled_list(
        root,
        "accounts",
        cards,
        folio.session.home_scroll,
        empty,
        accounts,
        |account, top, at| {
            let mut card = widget(
                Role::Card,
                "android.view.ViewGroup",
                "account_card",
                &format!("account_card:{}", account.id),
                "",
                at,
            );
            clickable(&mut card, Activate::OpenAccount(account.id.clone()));
            let balance = account.balance_cents();
            let txns = match account.txns.len() {
                1 => "1 transaction".to_owned(),
                n => format!("{n} transactions"),
            };
            let balance_role = if balance < 0.0 { Role::Debit } else { Role::Credit };
            let parts = vec![
                (
                    Role::Text,
                    "account_name",
                    account.name.clone(),
                    bounds(80, top + 25, 500, top + 105),
                ),
                (
                    balance_role,
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
            (card, parts)
        },
    );
    button(
        root,
        Role::Button,
        "add_account",
        "add_account_button",
        "+ Add account",
        bounds(40, 2140, 1040, 2300),
        Activate::AddAccount,
    );
}

fn add_account(folio: &Folio, root: &mut Widget) {
    toolbar(root, "New account", true);
    text_view(
        root,
        Role::Muted,
        "account_name_label",
        "Account name",
        bounds(80, 290, 1000, 350),
    );
    text_field(
        folio,
        root,
        Field::AccountName,
        "account_name",
        &folio.session.account_name,
        "e.g. Holiday fund",
        bounds(80, 360, 1000, 500),
    );
    form_error(
        folio,
        root,
        Form::Account,
        "account_name_error",
        bounds(80, 510, 1000, 570),
    );
    button(
        root,
        Role::Button,
        "create_account",
        "add_account_submit",
        "Create account",
        bounds(80, 640, 1000, 780),
        Activate::SubmitAccount,
    );
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
    text_view(
        card,
        Role::Muted,
        "ledger_balance_label",
        "Balance",
        bounds(80, 270, 1000, 335),
    );
    text_view(
        card,
        Role::Title,
        "ledger_balance",
        &format_money(account.balance_cents()),
        bounds(80, 340, 1000, 460),
    );

    let rows = folio.ledger_rows();
    let layout = ListLayout {
        at: LEDGER_LIST,
        lead: 10,
        pitch: ROW_PITCH,
        height: ROW_HEIGHT,
    };
    let empty = ("No transactions yet", bounds(80, 600, 1000, 680));
    scrolled_list(
        root,
        "ledger",
        layout,
        folio.session.ledger_scroll,
        empty,
        &rows,
        |row, top, at| {
            let item = widget(
                Role::Row,
                "android.widget.LinearLayout",
                "ledger_row",
                &format!("ledger_row:{}", row.txn.id),
                "",
                at,
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
            let amount = format!("{sign}{}", format_money(row.txn.amount_cents));
            let parts = vec![
                (
                    role,
                    "txn_row_amount",
                    amount,
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
            (item, parts)
        },
    );
    button(
        root,
        Role::Button,
        "add_txn",
        "add_txn_button",
        "+ Add transaction",
        bounds(40, 2140, 1040, 2300),
        Activate::AddTxn,
    );
}

fn add_txn(folio: &Folio, root: &mut Widget) {
    let session = &folio.session;
    toolbar(root, "New transaction", true);
    text_view(
        root,
        Role::Muted,
        "amount_label",
        "Amount",
        bounds(80, 270, 1000, 330),
    );
    text_field(
        folio,
        root,
        Field::Amount,
        "amount",
        &session.amount,
        "0.00",
        bounds(80, 340, 1000, 480),
    );
    form_error(folio, root, Form::Txn, "amount_error", bounds(80, 490, 1000, 550));
    text_view(
        root,
        Role::Muted,
        "note_label",
        "Note (optional)",
        bounds(80, 580, 1000, 640),
    );
    text_field(
        folio,
        root,
        Field::Note,
        "note",
        &session.note,
        "What was it for?",
        bounds(80, 650, 1000, 790),
    );
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
    button(
        root,
        Role::Button,
        "save",
        "txn_submit",
        "Save",
        bounds(80, 1120, 1000, 1260),
        Activate::SubmitTxn,
    );
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

/// The form's error message, when it shows one.
fn form_error(folio: &Folio, root: &mut Widget, form: Form, id: &str, at: Bounds) {
    if let Some(message) = folio.session.errors.get(&form) {
        text_view(root, Role::Error, id, message, at);
    }
}

/// Where a list sits and how its items are spaced: item `i` is `lead + i * pitch` below the
/// list's top (before scrolling) and `height` tall.
#[derive(Debug, Clone, Copy)]
struct ListLayout {
    at: Bounds,
    lead: i32,
    pitch: i32,
    height: i32,
}

/// A text part of a list item: its role, id, text and unclipped bounds.
type Part = (Role, &'static str, String, Bounds);

/// A scrollable list of `items` scrolled by `scroll`: `item` makes each visible one from its top
/// on screen and its visible bounds; its text parts are clipped to those bounds, as a list does.
fn scrolled_list<T>(
    root: &mut Widget,
    id: &str,
    layout: ListLayout,
    scroll: i32,
    (empty_text, empty_at): (&str, Bounds),
    items: &[T],
    item: impl Fn(&T, i32, Bounds) -> (Widget, Vec<Part>),
) {
    let content_height = layout.lead + items.len() as i32 * layout.pitch;
    let list = root.push(widget(
        Role::List,
        "androidx.recyclerview.widget.RecyclerView",
        id,
        "",
        "",
        layout.at,
    ));
    list.content_height = content_height;
    list.node.scrollable = content_height > layout.at.bottom - layout.at.top;
    if items.is_empty() {
        text_view(list, Role::Muted, "empty", empty_text, empty_at);
    }
    for (index, value) in items.iter().enumerate() {
        let top = layout.at.top + layout.lead + index as i32 * layout.pitch - scroll;
        let Some(visible) = clip(bounds(40, top, 1040, top + layout.height), layout.at) else {
            continue;
        };
        let (mut widget, parts) = item(value, top, visible);
        for (role, id, text, part) in parts {
            if let Some(part) = clip(part, visible) {
                text_view(&mut widget, role, id, &text, part);
            }
        }
        list.push(widget);
    }
}

/// A text view without a content description.
fn text_view<'a>(parent: &'a mut Widget, role: Role, id: &str, text: &str, at: Bounds) -> &'a mut Widget {
    parent.push(widget(role, "android.widget.TextView", id, "", text, at))
}

/// A clickable button that `action`s when tapped.
fn button<'a>(
    parent: &'a mut Widget,
    role: Role,
    id: &str,
    desc: &str,
    text: &str,
    at: Bounds,
    action: Activate,
) -> &'a mut Widget {
    let button = parent.push(widget(role, "android.widget.Button", id, desc, text, at));
    clickable(button, action);
    button
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
