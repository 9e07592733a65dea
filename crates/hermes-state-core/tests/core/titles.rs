//! Title numbering: how `split_numbered` reads `"<base> #<digits>"`, as
//! Python's `^(.*?) #(\d+)$` does.

use hermes_state_core::titles::split_numbered;

#[test]
fn numbered_titles_split_as_python() {
    assert_eq!(split_numbered("Docker fix #2"), Some(("Docker fix", "2")));
    assert_eq!(split_numbered("a #2 #3"), Some(("a #2", "3")));
    assert_eq!(split_numbered("#5"), None);
    assert_eq!(split_numbered(" #5"), Some(("", "5")));
    assert_eq!(split_numbered("X #2\n"), Some(("X", "2")));
    assert_eq!(split_numbered("X #2\n\n"), None);
    assert_eq!(split_numbered("a\nb #2"), None);
    assert_eq!(split_numbered("Docker fix #abc"), None);
    assert_eq!(
        split_numbered("Arabic #\u{663}"),
        Some(("Arabic", "\u{663}"))
    );
}
