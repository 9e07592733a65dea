//! The deterministic synthetic corpus the benches run on.
//!
//! A seeded xorshift generator ([`Rng`]) lays out sessions across four
//! sources (`cli`, `telegram`, `discord`, `cron`), compression lineages (one
//! deep chain of [`DEEP_CHAIN_LEN`] sessions plus many short chains), and
//! conversations of user turns, assistant replies (some with code blocks),
//! assistant tool calls and tool results. About 10 % of the messages are CJK.
//!
//! English prose comes from a fixed vocabulary that never contains the
//! *marker* words of [`markers`]; those are injected by the message's global
//! ordinal `g` (its position in insertion order), so every search query of
//! the benches has a hit count known in advance ([`Marker::expected`]).
//!
//! [`Corpus::ensure`] builds a store once per size under
//! `target/bench-corpus/state-<size>.db` and reuses it while its version
//! marker matches [`GENERATOR_VERSION`]. Messages go through the facade's
//! [`SessionDb::append_messages`] in large batches (one transaction each);
//! sessions are inserted with plain SQL, because their timestamps, token
//! counters and end reasons must be deterministic.

use hermes_state::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hermes_state::rusqlite::{self, Connection, OpenFlags, OptionalExtension, params};
use hermes_state::{NewMessage, SessionDb};
use serde_json::{Value, json};

/// Bump whenever the generated content changes: cached corpora with another
/// version are rebuilt.
pub const GENERATOR_VERSION: u32 = 2;

/// The generator's seed.
pub const SEED: u64 = 0x4845_524D_4553_5354;

/// Start time of the first session (2026-01-01T00:00:00Z); sessions start
/// 600 s apart, messages 5 s apart.
pub const BASE_TIME: f64 = 1_767_225_600.0;

/// Length of the deep compression chain formed by the first sessions.
pub const DEEP_CHAIN_LEN: usize = 50;

/// The `state_meta` key holding the corpus version marker.
pub const VERSION_KEY: &str = "bench_corpus_version";

/// The `state_meta` key holding the corpus statistics (JSON).
pub const STATS_KEY: &str = "bench_corpus_stats";

/// Messages per `append_messages` call (one transaction each) while building.
const BATCH_MESSAGES: usize = 20_000;

/// The sources sessions are spread over, with their weights (percent).
pub const SOURCES: [(&str, usize); 4] =
    [("cli", 40), ("telegram", 25), ("discord", 20), ("cron", 15)];

const MODELS: [(&str, f64); 5] = [
    ("anthropic/claude-sonnet-4", 3.0),
    ("openai/gpt-5", 2.5),
    ("google/gemini-2.5-pro", 1.25),
    ("qwen/qwen3-coder", 0.4),
    ("deepseek/deepseek-v3", 0.27),
];

const TOOLS: [&str; 6] = [
    "read_file",
    "terminal",
    "search_files",
    "write_file",
    "web_search",
    "patch",
];

/// The English vocabulary. It contains no marker word, nothing starting with
/// `deploy`, and not `blue`.
const WORDS: &[&str] = &[
    "the", "a", "and", "to", "of", "in", "for", "is", "on", "that", "with", "this", "it", "as",
    "be", "we", "can", "will", "not", "from", "session", "message", "database", "query", "index",
    "token", "model", "agent", "tool", "call", "result", "file", "path", "error", "value",
    "config", "server", "client", "request", "response", "cache", "memory", "thread", "process",
    "output", "input", "buffer", "stream", "batch", "commit", "branch", "merge", "review",
    "change", "update", "check", "test", "build", "run", "fix", "issue", "report", "summary",
    "context", "prompt", "reply", "user", "history", "filter", "source", "target", "schema",
    "table", "column", "row", "record", "event", "timer", "schedule", "job", "task", "queue",
    "worker", "retry", "timeout", "lock", "write", "read", "open", "close", "start", "stop",
    "parse", "format", "encode", "decode", "json", "text", "string", "number", "list", "map",
    "key", "name", "field", "option", "limit", "offset", "order", "sort", "score", "line", "block",
    "chunk", "page", "window", "frame", "layer", "network", "packet", "socket", "port", "host",
    "route", "channel", "topic", "notes", "draft", "plan", "idea", "step", "goal", "metric",
    "latency", "trace", "sample", "quick", "slow", "fast", "large", "small", "new", "old", "first",
    "last", "next", "same", "other", "every", "each", "some", "many", "few", "more", "less",
    "again", "still", "already", "maybe", "please", "thanks", "sure", "done",
];

/// The CJK vocabulary: no word contains 搜, 索, 数, 据 or 库, so the CJK
/// markers' bigrams never arise by accident.
const CJK_WORDS: &[&str] = &[
    "会话",
    "消息",
    "工具",
    "模型",
    "压缩",
    "用户",
    "助手",
    "文件",
    "代码",
    "测试",
    "性能",
    "问题",
    "结果",
    "配置",
    "服务器",
    "请求",
    "响应",
    "缓存",
    "内存",
    "线程",
    "进程",
    "输出",
    "输入",
    "任务",
    "队列",
    "超时",
    "错误",
    "日志",
    "版本",
    "分支",
    "提交",
    "合并",
    "检查",
    "构建",
    "运行",
    "修复",
    "报告",
    "总结",
    "上下文",
    "提示",
    "历史",
    "过滤",
    "来源",
    "目标",
    "记录",
    "事件",
    "计划",
    "步骤",
    "延迟",
    "吞吐量",
    "今天",
    "已经",
    "可能",
    "我们",
    "需要",
    "这个",
    "セッション",
    "メッセージ",
    "세션",
    "메시지",
];

/// The marker words and phrases, with the ordinals that carry them.
pub mod markers {
    use super::Marker;

    /// 0.01 % of the messages.
    pub const RARE: Marker = Marker::english("kestrel", 10_000, 17);
    /// 0.1 %.
    pub const UNCOMMON: Marker = Marker::english("falcon", 1_000, 3);
    /// 1 %.
    pub const COMMON: Marker = Marker::english("lantern", 100, 5);
    /// 10 %.
    pub const FREQUENT: Marker = Marker::english("harbor", 10, 1);
    /// The phrase `blue lantern`, on half the `lantern` messages (0.5 %).
    pub const PHRASE: Marker = Marker::english("blue lantern", 200, 5);
    /// `blue` alone, never next to `lantern` (2 %).
    pub const PHRASE_DECOY: Marker = Marker::english("blue", 50, 21);
    /// `deploy`, `deployed`, `deployment` or `deploying` (2.5 %).
    pub const PREFIX: Marker = Marker::english("deploy", 40, 11);
    /// An identifier inside code that only substring (trigram) search finds
    /// by its fragment [`FRAGMENT_QUERY`] (0.2 %).
    pub const FRAGMENT: Marker = Marker::english("zephyrquartz", 500, 77);
    /// The fragment of [`FRAGMENT`] the substring search looks for.
    pub const FRAGMENT_QUERY: &str = "yrquar";
    /// A two-character CJK word, in 10 % of the CJK messages.
    pub const CJK_TWO: Marker = Marker::cjk("搜索", 10, 3);
    /// A three-character CJK word, in 4 % of the CJK messages.
    pub const CJK_THREE: Marker = Marker::cjk("数据库", 25, 7);

    /// Every marker, in injection order.
    pub const ALL: [Marker; 10] = [
        RARE,
        UNCOMMON,
        COMMON,
        FREQUENT,
        PHRASE,
        PHRASE_DECOY,
        PREFIX,
        FRAGMENT,
        CJK_TWO,
        CJK_THREE,
    ];
}

/// A word or phrase injected into message `g` when `g % modulus == residue`
/// (for CJK markers, `g` counts CJK messages only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// The text.
    pub text: &'static str,
    /// Period of the injection.
    pub modulus: u64,
    /// Phase of the injection.
    pub residue: u64,
    /// Whether the ordinal counts CJK messages instead of all messages.
    pub cjk: bool,
}

impl Marker {
    const fn english(text: &'static str, modulus: u64, residue: u64) -> Marker {
        Marker {
            text,
            modulus,
            residue,
            cjk: false,
        }
    }

    const fn cjk(text: &'static str, modulus: u64, residue: u64) -> Marker {
        Marker {
            text,
            modulus,
            residue,
            cjk: true,
        }
    }

    fn hits(&self, ordinal: u64) -> bool {
        ordinal % self.modulus == self.residue
    }

    /// How many of `count` ordinals carry the marker.
    pub fn expected(&self, count: u64) -> u64 {
        if count > self.residue {
            (count - self.residue - 1) / self.modulus + 1
        } else {
            0
        }
    }
}

/// A small xorshift64* generator: deterministic, no dependencies.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator with this seed (0 is replaced by [`SEED`]).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 { SEED } else { seed })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 11) % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p` percent.
    pub fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Parses a corpus size: `10k`, `100k`, `1m`, or a plain number.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (digits, factor) = if let Some(d) = text.strip_suffix('k') {
        (d, 1_000)
    } else if let Some(d) = text.strip_suffix('m') {
        (d, 1_000_000)
    } else {
        (text.as_str(), 1)
    };
    digits
        .parse::<u64>()
        .ok()
        .map(|n| n * factor)
        .filter(|n| *n > 0)
}

/// The short label of a size: `10k`, `1m`, `2500`.
pub fn size_label(n: u64) -> String {
    if n.is_multiple_of(1_000_000) {
        format!("{}m", n / 1_000_000)
    } else if n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// One planned session.
#[derive(Debug, Clone)]
pub struct SessionPlan {
    /// Position in creation order.
    pub index: usize,
    /// Its id (`s0000042`).
    pub id: String,
    /// Its source.
    pub source: &'static str,
    /// Its model.
    pub model: &'static str,
    /// Index of its parent (compression lineage).
    pub parent: Option<usize>,
    /// Whether it was ended by compression (it has a child).
    pub compressed: bool,
    /// Whether it is still open (the newest sessions).
    pub open: bool,
    /// How many messages it holds.
    pub messages: usize,
}

impl SessionPlan {
    /// When it started.
    pub fn started_at(&self) -> f64 {
        BASE_TIME + self.index as f64 * 600.0
    }
}

/// The id of the `index`-th session.
pub fn session_id(index: usize) -> String {
    format!("s{index:07}")
}

/// The root of the deep chain (its descendants are the whole chain).
pub fn deep_chain_root() -> String {
    session_id(0)
}

/// The tip of the deep chain (its ancestors are the whole chain), when the
/// corpus is large enough to hold the whole chain.
pub fn deep_chain_tip() -> String {
    session_id(DEEP_CHAIN_LEN - 1)
}

/// Lays out the sessions of an `n`-message corpus.
pub fn plan_sessions(n: u64, rng: &mut Rng) -> Vec<SessionPlan> {
    let mut plans: Vec<SessionPlan> = Vec::new();
    let mut remaining = n as usize;
    let mut chain_len = 0;
    while remaining > 0 {
        let index = plans.len();
        let (source, model, parent) = if index < DEEP_CHAIN_LEN {
            ("cli", MODELS[0].0, index.checked_sub(1))
        } else if index > DEEP_CHAIN_LEN && chain_len < 6 && rng.percent(15) {
            let previous = &plans[index - 1];
            (previous.source, previous.model, Some(index - 1))
        } else {
            (weighted_source(rng), rng.pick(&MODELS).0, None)
        };
        chain_len = if parent.is_some() { chain_len + 1 } else { 0 };
        let wanted = if index < DEEP_CHAIN_LEN {
            rng.range(6, 10)
        } else if source == "cron" {
            rng.range(4, 16)
        } else {
            rng.range(10, 70)
        };
        let messages = wanted.min(remaining);
        remaining -= messages;
        if let Some(p) = parent {
            plans[p].compressed = true;
        }
        plans.push(SessionPlan {
            index,
            id: session_id(index),
            source,
            model,
            parent,
            compressed: false,
            open: false,
            messages,
        });
    }
    let open_from = plans.len() - plans.len().div_ceil(20);
    for plan in &mut plans[open_from..] {
        plan.open = !plan.compressed;
    }
    plans
}

fn weighted_source(rng: &mut Rng) -> &'static str {
    let mut roll = rng.below(100);
    for (source, weight) in SOURCES {
        if roll < weight {
            return source;
        }
        roll -= weight;
    }
    SOURCES[0].0
}

/// Counts of what the generator produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorpusStats {
    /// Messages.
    pub messages: u64,
    /// Sessions.
    pub sessions: u64,
    /// CJK messages.
    pub cjk_messages: u64,
    /// Messages with a code block or code output.
    pub code_messages: u64,
    /// Assistant messages with tool calls.
    pub tool_call_messages: u64,
    /// Tool results.
    pub tool_messages: u64,
    /// Sessions with a parent.
    pub child_sessions: u64,
    /// Bytes of message content.
    pub content_bytes: u64,
    /// Messages carrying each marker.
    pub markers: BTreeMap<String, u64>,
}

impl CorpusStats {
    /// As a JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "messages": self.messages,
            "sessions": self.sessions,
            "cjk_messages": self.cjk_messages,
            "code_messages": self.code_messages,
            "tool_call_messages": self.tool_call_messages,
            "tool_messages": self.tool_messages,
            "child_sessions": self.child_sessions,
            "content_bytes": self.content_bytes,
            "markers": self.markers,
        })
    }

    /// From [`CorpusStats::to_json`]'s output.
    pub fn from_json(value: &Value) -> CorpusStats {
        let int = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
        CorpusStats {
            messages: int("messages"),
            sessions: int("sessions"),
            cjk_messages: int("cjk_messages"),
            code_messages: int("code_messages"),
            tool_call_messages: int("tool_call_messages"),
            tool_messages: int("tool_messages"),
            child_sessions: int("child_sessions"),
            content_bytes: int("content_bytes"),
            markers: value
                .get("markers")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// Generates the messages of the sessions, in insertion order.
pub struct MessageGenerator {
    rng: Rng,
    ordinal: u64,
    cjk_ordinal: u64,
    call_counter: u64,
    /// What was generated so far.
    pub stats: CorpusStats,
}

impl MessageGenerator {
    /// A generator continuing from `rng`.
    pub fn new(rng: Rng) -> MessageGenerator {
        MessageGenerator {
            rng,
            ordinal: 0,
            cjk_ordinal: 0,
            call_counter: 0,
            stats: CorpusStats::default(),
        }
    }

    /// The messages of one session.
    pub fn session_messages(&mut self, plan: &SessionPlan) -> Vec<NewMessage> {
        let mut out: Vec<NewMessage> = Vec::with_capacity(plan.messages);
        let start = plan.started_at();
        let mut turn = Turn::User;
        let mut pending_calls: Vec<(String, &'static str)> = Vec::new();
        while out.len() < plan.messages {
            let timestamp = start + out.len() as f64 * 5.0 + 0.25;
            let message = match turn {
                Turn::User => {
                    turn = Turn::Assistant;
                    self.text_message(plan, "user", timestamp)
                }
                Turn::Assistant => {
                    let left = plan.messages - out.len();
                    if left >= 3 && self.rng.percent(35) {
                        let count = self.rng.range(1, 2);
                        let message =
                            self.tool_call_message(plan, timestamp, count, &mut pending_calls);
                        turn = Turn::Tool;
                        message
                    } else {
                        turn = Turn::User;
                        self.text_message(plan, "assistant", timestamp)
                    }
                }
                Turn::Tool => {
                    let (call_id, tool) = pending_calls.remove(0);
                    if pending_calls.is_empty() {
                        turn = Turn::Assistant;
                    }
                    self.tool_message(plan, timestamp, call_id, tool)
                }
            };
            out.push(message);
        }
        self.stats.sessions += 1;
        if plan.parent.is_some() {
            self.stats.child_sessions += 1;
        }
        out
    }

    fn next_ordinal(&mut self, cjk: bool) -> Vec<Marker> {
        let g = self.ordinal;
        self.ordinal += 1;
        self.stats.messages += 1;
        let c = self.cjk_ordinal;
        if cjk {
            self.cjk_ordinal += 1;
            self.stats.cjk_messages += 1;
        }
        let found: Vec<Marker> = markers::ALL
            .into_iter()
            .filter(|m| if m.cjk { cjk && m.hits(c) } else { m.hits(g) })
            .collect();
        for marker in &found {
            *self
                .stats
                .markers
                .entry(marker.text.to_owned())
                .or_default() += 1;
        }
        found
    }

    fn text_message(&mut self, plan: &SessionPlan, role: &str, timestamp: f64) -> NewMessage {
        let cjk = self.rng.percent(15);
        let found = self.next_ordinal(cjk);
        let mut text = if cjk {
            let cjk_markers: Vec<&str> = found.iter().filter(|m| m.cjk).map(|m| m.text).collect();
            self.cjk_sentence(&cjk_markers)
        } else {
            let words = if role == "user" {
                self.rng.range(6, 30)
            } else {
                self.rng.range(15, 60)
            };
            self.prose(words)
        };
        let english: Vec<Marker> = found.iter().copied().filter(|m| !m.cjk).collect();
        self.insert_markers(&mut text, &english);
        if role == "assistant" && !cjk && self.rng.percent(25) {
            text.push_str("\n\n```rust\n");
            text.push_str(&self.code_snippet(&english));
            text.push_str("```\n");
            self.stats.code_messages += 1;
        }
        if plan.source == "cron" && role == "user" {
            text.insert_str(0, "[scheduled job] ");
        }
        self.stats.content_bytes += text.len() as u64;
        let mut message = NewMessage::new(plan.id.clone(), role)
            .content(text)
            .timestamp(timestamp)
            .token_count(self.rng.range(20, 900) as i64);
        if role == "assistant" {
            message = message.finish_reason("stop");
        }
        message
    }

    fn tool_call_message(
        &mut self,
        plan: &SessionPlan,
        timestamp: f64,
        count: usize,
        pending: &mut Vec<(String, &'static str)>,
    ) -> NewMessage {
        let found = self.next_ordinal(false);
        let words = self.rng.range(4, 12);
        let mut text = self.prose(words);
        self.insert_markers(&mut text, &found);
        let calls: Vec<Value> = (0..count)
            .map(|_| {
                self.call_counter += 1;
                let id = format!("call_{:08x}", self.call_counter);
                let tool = *self.rng.pick(&TOOLS);
                let ident = self.identifier();
                pending.push((id.clone(), tool));
                let arguments = match tool {
                    "terminal" => json!({"command": format!("cargo test -p {ident}")}),
                    "web_search" => json!({"query": self.prose(4)}),
                    "search_files" => json!({"pattern": ident, "path": "src"}),
                    _ => json!({"path": format!("src/{ident}.rs")}),
                };
                json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": tool, "arguments": arguments.to_string()},
                })
            })
            .collect();
        self.stats.tool_call_messages += 1;
        self.stats.content_bytes += text.len() as u64;
        NewMessage::new(plan.id.clone(), "assistant")
            .content(text)
            .tool_calls(Value::Array(calls))
            .timestamp(timestamp)
            .finish_reason("tool_calls")
            .token_count(self.rng.range(20, 200) as i64)
    }

    fn tool_message(
        &mut self,
        plan: &SessionPlan,
        timestamp: f64,
        call_id: String,
        tool: &'static str,
    ) -> NewMessage {
        let found = self.next_ordinal(false);
        let text = match tool {
            "terminal" => self.terminal_output(&found),
            "web_search" => {
                let mut text = String::new();
                for i in 0..self.rng.range(2, 4) {
                    let words = self.rng.range(8, 20);
                    let line = self.prose(words);
                    let _ = writeln!(text, "{}. {line}", i + 1);
                }
                self.insert_markers(&mut text, &found);
                text
            }
            _ => {
                self.stats.code_messages += 1;
                let mut text = self.code_snippet(&found);
                for _ in 1..self.rng.range(1, 3) {
                    text.push('\n');
                    text.push_str(&self.code_snippet(&[]));
                }
                text
            }
        };
        self.stats.tool_messages += 1;
        self.stats.content_bytes += text.len() as u64;
        NewMessage::new(plan.id.clone(), "tool")
            .content(text)
            .tool_result(tool, call_id)
            .timestamp(timestamp)
    }

    fn prose(&mut self, words: usize) -> String {
        let mut text = String::new();
        for i in 0..words {
            if i > 0 {
                text.push(' ');
            }
            let word: &str = self.rng.pick::<&str>(WORDS);
            text.push_str(word);
            if i + 1 < words && self.rng.percent(8) {
                text.push(if self.rng.percent(50) { ',' } else { '.' });
            }
        }
        text.push('.');
        text
    }

    fn cjk_sentence(&mut self, cjk_markers: &[&str]) -> String {
        let count = self.rng.range(6, 20);
        let mut pieces: Vec<&str> = (0..count).map(|_| *self.rng.pick(CJK_WORDS)).collect();
        for marker in cjk_markers {
            let at = self.rng.below(pieces.len() + 1);
            pieces.insert(at, marker);
        }
        let mut text = String::new();
        for (i, piece) in pieces.iter().enumerate() {
            text.push_str(piece);
            if i + 1 < pieces.len() && self.rng.percent(15) {
                text.push('，');
            }
        }
        text.push('。');
        text
    }

    /// Inserts the English markers as words at random word boundaries.
    fn insert_markers(&mut self, text: &mut String, found: &[Marker]) {
        for marker in found {
            if marker.cjk {
                continue;
            }
            let word = if marker.text == markers::PREFIX.text {
                const FORMS: [&str; 4] = ["deploy", "deployed", "deployment", "deploying"];
                FORMS[self.rng.below(4)]
            } else if marker.text == markers::FRAGMENT.text {
                // In code, the identifier has a prefix and a suffix too.
                "let zephyrquartz_total = 0;"
            } else {
                marker.text
            };
            let spaces: Vec<usize> = text.match_indices(' ').map(|(i, _)| i).collect();
            if spaces.is_empty() {
                text.push(' ');
                text.push_str(word);
            } else {
                let at = spaces[self.rng.below(spaces.len())];
                text.insert_str(at, &format!(" {word}"));
            }
        }
    }

    fn identifier(&mut self) -> String {
        format!(
            "{}_{}",
            self.rng.pick(&WORDS[20..]),
            self.rng.pick(&WORDS[20..])
        )
    }

    fn code_snippet(&mut self, found: &[Marker]) -> String {
        let a = self.identifier();
        let b = self.identifier();
        let mut code = match self.rng.below(3) {
            0 => format!(
                "fn {a}(conn: &Connection, id: i64) -> Result<Option<String>> {{\n    let mut stmt = conn.prepare_cached(\"SELECT content FROM messages WHERE id = ?1\")?;\n    let {b} = stmt.query_row([id], |row| row.get(0)).optional()?;\n    Ok({b})\n}}\n"
            ),
            1 => format!(
                "def {a}(path, limit=20):\n    with open(path) as handle:\n        {b} = [line.rstrip() for line in handle]\n    return {b}[:limit]\n"
            ),
            _ => format!(
                "struct {}State {{\n    {a}: Vec<u8>,\n    {b}: HashMap<String, usize>,\n}}\n\nimpl {}State {{\n    fn reset(&mut self) {{\n        self.{a}.clear();\n        self.{b}.clear();\n    }}\n}}\n",
                camel(&a),
                camel(&a)
            ),
        };
        for marker in found {
            if marker.cjk {
                continue;
            }
            if marker.text == markers::FRAGMENT.text {
                code.push_str("let zephyrquartz_total = 0;\n");
            } else if marker.text == markers::PREFIX.text {
                code.push_str("// deployment step\n");
            } else {
                let _ = writeln!(code, "// {}", marker.text);
            }
        }
        code
    }

    fn terminal_output(&mut self, found: &[Marker]) -> String {
        let krate = self.identifier();
        let mut text = format!(
            "$ cargo test -p {krate}\n   Compiling {krate} v0.1.0\n    Finished test profile in {}.{}s\n     Running unittests src/lib.rs\n",
            self.rng.range(1, 40),
            self.rng.below(10)
        );
        for _ in 0..self.rng.range(2, 8) {
            let _ = writeln!(text, "test {} ... ok", self.identifier());
        }
        let _ = writeln!(
            text,
            "test result: ok. {} passed; 0 failed",
            self.rng.range(2, 80)
        );
        self.insert_markers(&mut text, found);
        text
    }
}

enum Turn {
    User,
    Assistant,
    Tool,
}

fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

const SYSTEM_PROMPT: &str = "You are Hermes, a helpful agent running on the user's machine. You can read and write files, run terminal commands, search the web and remember past sessions. Prefer small, verifiable steps; explain what you change and why. When a tool fails, read its error before retrying. Keep answers short unless the user asks for detail. Never run destructive commands without asking first.";

const INSERT_SESSION: &str = "INSERT INTO sessions (id, source, user_id, chat_id, chat_type, model, system_prompt, parent_session_id, started_at, ended_at, end_reason, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cwd, billing_provider, estimated_cost_usd, title, api_call_count)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)";

fn insert_session(
    conn: &Connection,
    plan: &SessionPlan,
    parent_id: Option<&str>,
    rng: &mut Rng,
) -> rusqlite::Result<()> {
    let calls = (plan.messages / 2).max(1) as i64;
    let input = calls * rng.range(2_000, 12_000) as i64;
    let output = calls * rng.range(100, 900) as i64;
    let price = MODELS
        .iter()
        .find(|(m, _)| *m == plan.model)
        .map_or(1.0, |(_, p)| *p);
    let cost = (input as f64 * price + output as f64 * price * 4.0) / 1_000_000.0;
    let (chat_id, chat_type, user_id) = match plan.source {
        "telegram" | "discord" => (
            Some(format!("chat-{}", plan.index % 97)),
            Some(if plan.index.is_multiple_of(3) {
                "group"
            } else {
                "dm"
            }),
            Some(format!("user-{}", plan.index % 13)),
        ),
        _ => (None, None, None),
    };
    let ended_at = (!plan.open).then(|| plan.started_at() + plan.messages as f64 * 5.0 + 60.0);
    let end_reason = if plan.compressed {
        Some("compression")
    } else if plan.open {
        None
    } else {
        Some("user_exit")
    };
    let title = plan
        .index
        .is_multiple_of(3)
        .then(|| format!("Topic {}", plan.index));
    conn.prepare_cached(INSERT_SESSION)?.execute(params![
        plan.id,
        plan.source,
        user_id,
        chat_id,
        chat_type,
        plan.model,
        SYSTEM_PROMPT,
        parent_id,
        plan.started_at(),
        ended_at,
        end_reason,
        input,
        output,
        input / 2,
        input / 10,
        output / 4,
        "/home/user/project",
        plan.model.split('/').next(),
        cost,
        title,
        calls,
    ])?;
    Ok(())
}

/// A built corpus on disk.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Its size in messages.
    pub size: u64,
    /// The database file.
    pub path: PathBuf,
    /// What it holds.
    pub stats: CorpusStats,
}

/// Where corpora are cached: `$HERMES_BENCH_CORPUS_DIR`, else
/// `$CARGO_TARGET_DIR/bench-corpus`, else the workspace's `target/bench-corpus`.
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HERMES_BENCH_CORPUS_DIR") {
        return PathBuf::from(dir);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            manifest.parent().unwrap_or(manifest).join("target")
        });
    target.join("bench-corpus")
}

fn version_marker(size: u64) -> String {
    format!("v{GENERATOR_VERSION} seed={SEED:#x} n={size}")
}

/// Errors of building or opening a corpus.
#[derive(Debug)]
pub struct CorpusError(pub String);

impl std::fmt::Display for CorpusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CorpusError {}

fn err(what: &str, e: impl std::fmt::Display) -> CorpusError {
    CorpusError(format!("{what}: {e}"))
}

impl Corpus {
    /// The cached corpus of `size` messages, built first when missing or
    /// of another generator version. Progress goes to `progress`.
    pub fn ensure(size: u64, progress: &mut dyn FnMut(&str)) -> Result<Corpus, CorpusError> {
        let dir = corpus_dir();
        fs::create_dir_all(&dir).map_err(|e| err("creating the corpus folder", e))?;
        let path = dir.join(format!("state-{}.db", size_label(size)));
        if let Some(stats) = read_marker(&path, size) {
            return Ok(Corpus { size, path, stats });
        }
        progress(&format!(
            "building the {}-message corpus at {}",
            size_label(size),
            path.display()
        ));
        let stats = build(&path, size, progress)?;
        Ok(Corpus { size, path, stats })
    }

    /// Copies the corpus file into `dir` (for benches that write).
    pub fn copy_to(&self, dir: &Path) -> Result<PathBuf, CorpusError> {
        let target = dir.join("state.db");
        // A reader that did not close cleanly may have left a WAL behind: fold it in first.
        if self.path.with_extension("db-wal").exists() {
            let conn = Connection::open(&self.path).map_err(|e| err("opening the corpus", e))?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .map_err(|e| err("checkpointing the corpus", e))?;
        }
        fs::copy(&self.path, &target).map_err(|e| err("copying the corpus", e))?;
        Ok(target)
    }
}

fn read_marker(path: &Path, size: u64) -> Option<CorpusStats> {
    if !path.exists() {
        return None;
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    let version: Option<String> = conn
        .query_row(
            "SELECT value FROM state_meta WHERE key = ?1",
            [VERSION_KEY],
            |r| r.get(0),
        )
        .optional()
        .ok()?;
    if version.as_deref() != Some(version_marker(size).as_str()) {
        return None;
    }
    let stats: String = conn
        .query_row(
            "SELECT value FROM state_meta WHERE key = ?1",
            [STATS_KEY],
            |r| r.get(0),
        )
        .ok()?;
    Some(CorpusStats::from_json(&serde_json::from_str(&stats).ok()?))
}

fn remove_db_files(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let _ = fs::remove_file(PathBuf::from(name));
    }
}

/// Builds an `n`-message corpus at `path` (replacing any file there): into
/// `path.tmp` first, renamed when complete.
pub fn build(
    path: &Path,
    n: u64,
    progress: &mut dyn FnMut(&str),
) -> Result<CorpusStats, CorpusError> {
    let started = Instant::now();
    let tmp = path.with_extension("db.tmp");
    remove_db_files(&tmp);
    remove_db_files(path);
    let db = SessionDb::open(&tmp).map_err(|e| err("creating the store", e))?;
    let conn = hermes_state::schema::connection::open_read_write(&tmp)
        .map_err(|e| err("opening a second connection", e))?;
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = OFF;")
        .map_err(|e| err("configuring", e))?;

    let mut rng = Rng::new(SEED);
    let plans = plan_sessions(n, &mut rng);
    let mut session_rng = Rng::new(SEED ^ 0x5E55_1055);
    let mut generator = MessageGenerator::new(rng);
    let mut next_session = 0;
    let mut last_report = Instant::now();
    while next_session < plans.len() {
        let mut batch: Vec<NewMessage> = Vec::with_capacity(BATCH_MESSAGES + 100);
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| err("starting", e))?;
        while next_session < plans.len() && batch.len() < BATCH_MESSAGES {
            let plan = &plans[next_session];
            let parent = plan.parent.map(|p| plans[p].id.as_str());
            insert_session(&conn, plan, parent, &mut session_rng)
                .map_err(|e| err("inserting a session", e))?;
            batch.extend(generator.session_messages(plan));
            next_session += 1;
        }
        conn.execute_batch("COMMIT")
            .map_err(|e| err("committing sessions", e))?;
        db.append_messages(&batch)
            .map_err(|e| err("appending messages", e))?;
        if last_report.elapsed().as_secs() >= 5 || next_session == plans.len() {
            last_report = Instant::now();
            let done = generator.stats.messages;
            progress(&format!(
                "  {done}/{n} messages ({:.0}%), {:.0} s",
                done as f64 * 100.0 / n as f64,
                started.elapsed().as_secs_f64()
            ));
        }
    }
    progress("  merging the FTS indexes (optimize)");
    for table in ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"] {
        conn.execute_batch(&format!("INSERT INTO {table}({table}) VALUES('optimize')"))
            .map_err(|e| err("optimizing the FTS indexes", e))?;
    }
    let stats = generator.stats;
    conn.execute(
        "INSERT INTO state_meta (key, value) VALUES (?1, ?2), (?3, ?4)",
        params![
            VERSION_KEY,
            version_marker(n),
            STATS_KEY,
            stats.to_json().to_string()
        ],
    )
    .map_err(|e| err("writing the version marker", e))?;
    drop(conn);
    db.close().map_err(|e| err("closing the store", e))?;
    remove_db_files(path);
    fs::rename(&tmp, path).map_err(|e| err("moving the corpus in place", e))?;
    remove_db_files(&tmp);
    let size = fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    progress(&format!(
        "  built {} messages in {} sessions, {:.1} MB, in {:.1} s",
        stats.messages,
        stats.sessions,
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    ));
    Ok(stats)
}

/// The corpus sizes to bench: `$HERMES_BENCH_SIZES` (comma-separated, e.g.
/// `10k,100k,1m`), default `10k,100k`; in test mode (`cargo test --benches`)
/// only `$HERMES_BENCH_TEST_SIZE` (default `10k`).
pub fn bench_sizes() -> Vec<u64> {
    if is_test_mode() {
        let size = std::env::var("HERMES_BENCH_TEST_SIZE").unwrap_or_else(|_| "10k".to_owned());
        return vec![parse_size(&size).unwrap_or(10_000)];
    }
    let sizes = std::env::var("HERMES_BENCH_SIZES").unwrap_or_else(|_| "10k,100k".to_owned());
    let parsed: Vec<u64> = sizes.split(',').filter_map(parse_size).collect();
    if parsed.is_empty() {
        vec![10_000, 100_000]
    } else {
        parsed
    }
}

/// Whether the bench binary runs in criterion's test mode: `cargo test
/// --benches` passes no `--bench` flag (or passes `--test`).
pub fn is_test_mode() -> bool {
    let args: Vec<String> = std::env::args().collect();
    !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test")
}
