//! The `cjk_unicode61` tokenizer under hostile text: the corpus of the fuzz
//! target `cjk_tokenizer` (`fuzz/README.md`), replayed through the same
//! function the target calls, so every committed seed and every past finding
//! stays checked by `cargo test`.

mod tokenizer_input;

use std::path::Path;

use tokenizer_input::TokenizerTarget;

/// The committed corpus files (`seed-*`; what libFuzzer adds locally is
/// ignored by git, and left out here so every checkout tests the same
/// inputs), in name order.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/cjk_tokenizer");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("the corpus {}: {e}", folder.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("seed-"))
        })
        .map(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            (
                name.unwrap_or_default(),
                std::fs::read(&path).expect("a corpus file"),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_cjk_tokenizer_corpus_replays_without_a_finding() {
    let target = TokenizerTarget::new();
    let files = corpus();
    assert!(files.len() >= 10, "the committed seeds are there");
    for (name, bytes) in &files {
        // A finding panics with the input; name the file too.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.run(bytes)));
        assert!(
            result.is_ok(),
            "corpus file {name} fails (see the panic above)"
        );
    }
}

#[test]
fn invalid_utf8_reaches_the_tokenizer_and_keeps_valid_offsets() {
    // Lone continuation bytes, a cut-off CJK character, an overlong NUL and
    // a surrogate, around CJK text: each through every argument choice.
    let target = TokenizerTarget::new();
    let text: &[u8] =
        b"\x80\xbf \xe6\x95 \xc0\x80 \xed\xa0\x80 \xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93 ab\xffcd";
    for choice in 0..8_u8 {
        let mut input = vec![choice];
        input.extend_from_slice(text);
        target.run(&input);
    }
}
