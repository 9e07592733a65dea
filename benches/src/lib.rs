//! Benchmarks of `hermes-state` against a minimal hand-written `rusqlite`
//! baseline, on a deterministic synthetic corpus.
//!
//! * [`corpus`]: the seeded generator and the per-size cache under
//!   `target/bench-corpus/`.
//! * [`baseline`]: the same SQL on a plain connection, no facade.
//! * [`cases`]: the search queries, with the facade's options and the
//!   equivalent single SQL query of the baseline.
//! * [`sides`]: the shuffled order of the sides of interleaved measurements.
//! * [`writers`]: writer processes and latency percentiles for the
//!   multi-process benches.
//!
//! The criterion benches live in `benches/benches/`; `docs/PERFORMANCE.md`
//! holds the figures and how to reproduce them.

pub mod baseline;
pub mod cases;
pub mod corpus;
pub mod sides;
pub mod writers;

use hermes_state::NewMessage;

/// A pool of `count` messages for the append benches, spread over
/// `sessions` (round robin), generated like the corpus (prose, code, tool
/// calls, CJK) with `timestamp` left empty (now), as a live agent appends.
pub fn message_pool(sessions: &[String], count: usize) -> Vec<NewMessage> {
    let mut rng = corpus::Rng::new(corpus::SEED ^ 0x00A9_9E4D);
    let plan_rng = rng.clone();
    let mut generator = corpus::MessageGenerator::new(plan_rng);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let index = rng.below(1 << 20);
        let plan = corpus::SessionPlan {
            index,
            id: String::new(),
            source: "cli",
            model: "m",
            parent: None,
            compressed: false,
            open: true,
            messages: 40,
        };
        for mut message in generator.session_messages(&plan) {
            if out.len() == count {
                break;
            }
            message.session_id = sessions[out.len() % sessions.len()].clone();
            message.timestamp = None;
            out.push(message);
        }
    }
    out
}

#[cfg(test)]
mod tests;
