//! A time window: `since` inclusive, `until` exclusive, either end open.

use hermes_state_core::time_window::TimeWindow;

#[test]
fn the_window_is_inclusive_then_exclusive() {
    let window = TimeWindow {
        since: Some(10.0),
        until: Some(20.0),
    };
    assert!(!window.contains(9.9));
    assert!(window.contains(10.0));
    assert!(window.contains(19.9));
    assert!(!window.contains(20.0));
    assert!(window.is_after(9.0));
    assert!(!window.is_after(10.0));
    assert!(!window.is_after(25.0), "after the window is not before it");
    assert!(window.is_set());
}

#[test]
fn open_ends_take_everything_on_their_side() {
    let everything = TimeWindow::default();
    assert!(everything.contains(f64::MIN) && everything.contains(f64::MAX));
    assert!(!everything.is_set());
    assert!(!everything.is_after(f64::MIN));
    let until = TimeWindow {
        since: None,
        until: Some(5.0),
    };
    assert!(until.contains(-1e12) && !until.contains(5.0));
    assert!(!until.is_after(-1e12), "no lower bound: never past it");
}
