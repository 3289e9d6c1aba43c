//! The host's selectors on a hierarchy the Kotlin SDK read from a real View
//! layout under Robolectric: `sdk-android/src/test/resources/hierarchy/form_with_dialog.json`,
//! which `HierarchyTest.kt` checks its capture against. A change on either side
//! that breaks `id:`, `text:`, `desc:` or `descPrefix:` on an in-app hierarchy fails here.

use std::path::Path;

use uatu_device::Hierarchy;
use uatu_device::agent::AppHierarchy;
use uatu_device::selector::Matcher;

fn captured() -> Hierarchy {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sdk-android/src/test/resources/hierarchy/form_with_dialog.json");
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let wire: AppHierarchy = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not a STATE hierarchy: {e}", path.display()));
    wire.into()
}

fn find<'h>(hierarchy: &'h Hierarchy, selector: &str) -> &'h uatu_device::Node {
    Matcher::parse(selector)
        .unwrap_or_else(|| panic!("{selector} is not a selector"))
        .find(&hierarchy.root)
        .unwrap_or_else(|| panic!("{selector} matches nothing"))
}

#[test]
fn the_host_selectors_resolve_on_the_in_app_hierarchy() {
    let hierarchy = captured();
    assert_eq!((hierarchy.screen.width, hierarchy.screen.height), (320, 470));

    // Windows are bottom to top, so the activity's button comes before the dialog's.
    let submit = find(&hierarchy, "id:button1");
    assert_eq!(submit.text, "Submit");
    assert!(!submit.enabled);
    assert_eq!(
        (
            submit.bounds.left,
            submit.bounds.top,
            submit.bounds.right,
            submit.bounds.bottom
        ),
        (10, 100, 310, 150)
    );
    assert_eq!(
        find(&hierarchy, "desc:Submit transaction").id,
        "android:id/button1"
    );
    assert_eq!(find(&hierarchy, "id:android:id/edit").text, "note");

    let delete = find(&hierarchy, "text:Delete");
    assert!(delete.enabled && delete.clickable);
    assert_eq!(delete.class_name, "android.widget.Button");

    let first_row = find(&hierarchy, "descPrefix:row_");
    assert_eq!(first_row.desc, "row_0");
    assert_eq!(first_row.text, "item 0");

    assert!(
        Matcher::parse("id:empty")
            .expect("selector")
            .find(&hierarchy.root)
            .is_none(),
        "the invisible view is not in the hierarchy"
    );
}
