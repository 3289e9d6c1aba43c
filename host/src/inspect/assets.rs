//! The page's files, embedded in the binary so that `uatu inspect` works offline
//! from any directory, and a report is one file.

const HTML: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// An embedded asset by name: its MIME type and bytes.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "app.js" => Some(("text/javascript; charset=utf-8", SCRIPT)),
        "app.css" => Some(("text/css; charset=utf-8", STYLE)),
        _ => None,
    }
}

/// The page for the server: scripts and styles linked, `config` (JSON) inline.
pub fn page(config: &str, data: &str) -> String {
    HTML.replace(
        "<!--HEAD-->",
        r#"<link rel="stylesheet" href="/assets/app.css"><script defer src="/assets/app.js"></script>"#,
    )
    .replace("<!--CONFIG-->", &script_json("uatu-config", config))
    .replace("<!--DATA-->", data)
}

/// The page as one self-contained file: styles, script, `config` and `data` (JSON) inline.
pub fn standalone(config: &str, data: &str) -> String {
    // An inline script runs where it stands: it goes after the page and its data.
    let script = format!("<script>{}</script>", SCRIPT.replace("</script", "<\\/script"));
    // The template is split, not searched with `replace`, so nothing inlined is searched again.
    let (before, after) = HTML.split_once("<!--HEAD-->").unwrap_or((HTML, ""));
    let (middle, rest) = after.split_once("<!--CONFIG-->").unwrap_or((after, ""));
    let (middle2, end) = rest.split_once("<!--DATA-->").unwrap_or((rest, ""));
    let mut html =
        String::with_capacity(HTML.len() + STYLE.len() + script.len() + config.len() + data.len() + 256);
    html.push_str(before);
    html.push_str("<style>");
    html.push_str(STYLE);
    html.push_str("</style>");
    html.push_str(middle);
    html.push_str(&script_json("uatu-config", config));
    html.push_str(middle2);
    html.push_str(&script_json("uatu-data", data));
    html.push_str(&script);
    html.push_str(end);
    html
}

/// JSON inside a `<script>` element: every `<` (only ever inside a JSON string)
/// written as `\u003c`, so nothing in it can close the element or open a comment.
fn script_json(id: &str, json: &str) -> String {
    format!(
        r#"<script type="application/json" id="{id}">{}</script>"#,
        json.replace('<', "\\u003c")
    )
}
