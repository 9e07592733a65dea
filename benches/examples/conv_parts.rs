#![allow(clippy::print_stdout, missing_docs)]
use hermes_state::query::conversation_search::{ConversationScope, search_conversations_in};
use hermes_state::query::lookups::get_compression_tip;
use hermes_state::query::search::{
    FtsCapabilities, SearchOptions, hits_by_id, search_keys, search_messages,
};
use hermes_state_benches::corpus::{self, Corpus};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size = corpus::parse_size(&args[1]).unwrap();
    let q = &args[2];
    let corpus = Corpus::ensure(size, &mut |_| {}).unwrap();
    let conn = hermes_state::query::open_read_only(&corpus.path).unwrap();
    let caps = FtsCapabilities::detect(&conn).unwrap();
    let o = SearchOptions::default();
    for _ in 0..5 {
        conn.execute_batch("BEGIN").unwrap();
        let t = Instant::now();
        let plain = search_messages(&conn, q, &o, caps).unwrap();
        let t_plain = t.elapsed();
        let t = Instant::now();
        let keys = search_keys(&conn, q, &o, caps, Some(5000))
            .unwrap()
            .unwrap();
        let t_keys = t.elapsed();
        let ids: Vec<i64> = keys.keys.iter().take(20).map(|k| k.id).collect();
        let t = Instant::now();
        let hits = hits_by_id(&conn, &keys, &ids).unwrap();
        let t_hits = t.elapsed();
        let t = Instant::now();
        for h in &hits {
            get_compression_tip(&conn, &h.session_id).unwrap();
        }
        let t_tips = t.elapsed();
        let t = Instant::now();
        let c = search_conversations_in(&conn, q, &o, &ConversationScope::default(), caps).unwrap();
        let t_conv = t.elapsed();
        conn.execute_batch("COMMIT").unwrap();
        println!(
            "plain {:?} ({}) keys {:?} ({}) hits {:?} tips {:?} conv {:?} ({})",
            t_plain,
            plain.len(),
            t_keys,
            keys.keys.len(),
            t_hits,
            t_tips,
            t_conv,
            c.len()
        );
    }
}
