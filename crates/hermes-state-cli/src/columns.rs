//! Width-aware table columns: how wide the output may be, how wide a text
//! shows (CJK characters take two columns), and how a model name is
//! shortened without losing the part that tells models apart.
//!
//! The width is `COLUMNS` when it holds a positive number, else the
//! terminal's width when stdout is a terminal, else [`DEFAULT_WIDTH`].

use console::{Term, measure_text_width, truncate_str};

/// The width when neither `COLUMNS` nor a terminal says.
pub const DEFAULT_WIDTH: usize = 100;

/// The width a table may take.
pub fn table_width(stdout_tty: bool) -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|w| *w > 0);
    from_env
        .or_else(|| {
            stdout_tty
                .then(|| Term::stdout().size_checked())
                .flatten()
                .map(|(_, cols)| usize::from(cols))
                .filter(|w| *w > 0)
        })
        .unwrap_or(DEFAULT_WIDTH)
}

/// The columns a text takes on a terminal (styles not counted).
pub fn width(text: &str) -> usize {
    measure_text_width(text)
}

/// At most `max` columns, with `…` when cut.
pub fn cut(text: &str, max: usize) -> String {
    truncate_str(text, max, "…").into_owned()
}

/// `text` cut to `max` columns and padded with spaces to exactly `max`.
pub fn fit(text: &str, max: usize) -> String {
    let cut = cut(text, max);
    let pad = max.saturating_sub(width(&cut));
    format!("{cut}{}", " ".repeat(pad))
}

/// The narrowest a model name can be shown: its last `/`-segment (the
/// model itself) behind `…/`, or the whole name when that is not shorter.
pub fn model_floor(model: &str) -> usize {
    let whole = width(model);
    match model.rsplit_once('/') {
        Some((_, name)) => whole.min(width(name) + 2),
        None => whole,
    }
}

/// A model name in at most `max` columns, cut from the provider side one
/// `/`-segment at a time (`anthropic/claude-sonnet-4-5` →
/// `…/claude-sonnet-4-5`); the last segment is never cut, so a name wider
/// than its floor overflows rather than lose it. Not padded.
pub fn shorten_model(model: &str, max: usize) -> String {
    if width(model) <= max {
        return model.to_owned();
    }
    let mut rest = model;
    while let Some((_, tail)) = rest.split_once('/') {
        let shown = format!("…/{tail}");
        if width(&shown) <= max || !tail.contains('/') {
            return shown;
        }
        rest = tail;
    }
    model.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_lose_their_provider_first_and_never_their_name() {
        let m = "anthropic/claude-sonnet-4-5";
        assert_eq!(shorten_model(m, 40), m);
        assert_eq!(shorten_model(m, 26), "…/claude-sonnet-4-5");
        assert_eq!(shorten_model(m, 19), "…/claude-sonnet-4-5");
        assert_eq!(shorten_model(m, 10), "…/claude-sonnet-4-5");
        assert_eq!(model_floor(m), 19);
        let nested = "openrouter/anthropic/claude-x";
        assert_eq!(shorten_model(nested, 22), "…/anthropic/claude-x");
        assert_eq!(shorten_model(nested, 15), "…/claude-x");
        assert_eq!(model_floor("gpt-5"), 5);
        assert_eq!(shorten_model("gpt-5", 3), "gpt-5");
    }

    #[test]
    fn wide_characters_count_twice() {
        assert_eq!(width("东京"), 4);
        assert_eq!(fit("东京旅行", 5), "东京…");
        assert_eq!(width(&fit("东京旅行", 5)), 5);
        assert_eq!(fit("ab", 4), "ab  ");
    }
}
