//! Re-embeds the refinery migrations when a file is added to `migrations/`
//! (`include_str!` alone only notices edits of files it already knows).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
