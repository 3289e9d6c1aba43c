//! An extractor that hands the hierarchy back as the SDK shows it (one array per
//! node), so the host can check the string table's round trip through a component.
use uatu_plugin_sdk::extractor::*;
use uatu_plugin_sdk::serde_json::json;

struct Echo;

impl Extractor for Echo {
    fn init(_config: Config) -> Result<Self, String> {
        Ok(Echo)
    }
    fn extract(
        &mut self,
        ctx: &StepContext,
        _screenshot: Option<&Screenshot>,
    ) -> Result<Vec<NamedValue>, String> {
        let nodes: Vec<_> = ctx
            .hierarchy
            .nodes()
            .map(|node| {
                let b = node.bounds();
                json!([
                    node.depth(),
                    node.id(),
                    node.desc(),
                    node.text(),
                    node.class(),
                    [node.is_clickable(), node.is_enabled(), node.is_scrollable()],
                    [b.left, b.top, b.right, b.bottom],
                    node.parent().map(|parent| parent.index()),
                    node.children().count(),
                ])
            })
            .collect();
        Ok(vec![NamedValue::new("nodes", json!(nodes))])
    }
}

uatu_plugin_sdk::export_extractor!(Echo);
