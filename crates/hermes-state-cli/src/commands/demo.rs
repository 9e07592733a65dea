//! `demo`: a short, realistic sample to try every command on.
//!
//! Eight sessions from four sources (cli, telegram, discord, cron) spread over
//! the last months: a weather question with a tool call and folded reasoning;
//! a refactoring session ended by context compression, its continuation, a
//! delegated sub-agent and a branch (a lineage); a Telegram chat; a Chinese
//! and Japanese trip plan (CJK search); and a 200-day-old cron digest that
//! `prune --older-than-days 90` removes.
//!
//! The sessions and messages are written with the library's import (so
//! their times can lie in the past), then tokens and costs with
//! `update_token_counts` and `record_auxiliary_usage`, as the agent records them.
//!
//! `demo` fills only a store without sessions; `--force` adds the sample to
//! any store, replacing the sample's own sessions (ids `demo-…`) if present.

use hermes_state::prelude::*;
use std::io::Cursor;

use hermes_state::{
    AuxiliaryUsage, EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ImportOptions, SCHEMA_VERSION,
    SessionStore, TokenUpdate,
};
use hermes_state_types::pyjson;
use serde_json::{Map, Value, json};

use crate::cli::DemoArgs;
use crate::commands::session_count;
use crate::error::{CliError, CliResult};
use crate::output::write_json_line;
use crate::store::{Access, Context};

const DAY: f64 = 86_400.0;

/// One sample message.
struct Msg {
    role: &'static str,
    content: Option<&'static str>,
    /// Seconds after the session's start.
    at: f64,
    tool_calls: Option<Value>,
    tool_name: Option<&'static str>,
    tool_call_id: Option<&'static str>,
    finish_reason: Option<&'static str>,
    reasoning: Option<&'static str>,
}

fn msg(role: &'static str, at: f64, content: &'static str) -> Msg {
    Msg {
        role,
        content: Some(content),
        at,
        tool_calls: None,
        tool_name: None,
        tool_call_id: None,
        finish_reason: if role == "assistant" {
            Some("stop")
        } else {
            None
        },
        reasoning: None,
    }
}

fn call(
    at: f64,
    id: &'static str,
    name: &str,
    arguments: Value,
    reasoning: Option<&'static str>,
) -> Msg {
    Msg {
        role: "assistant",
        content: None,
        at,
        tool_calls: Some(json!([{
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": pyjson::to_string(&arguments)},
        }])),
        tool_name: None,
        tool_call_id: None,
        finish_reason: Some("tool_calls"),
        reasoning,
    }
}

fn result(at: f64, tool: &'static str, id: &'static str, content: &'static str) -> Msg {
    Msg {
        role: "tool",
        content: Some(content),
        at,
        tool_calls: None,
        tool_name: Some(tool),
        tool_call_id: Some(id),
        finish_reason: None,
        reasoning: None,
    }
}

/// One sample session.
struct Sample {
    id: &'static str,
    source: &'static str,
    model: &'static str,
    title: &'static str,
    /// Days before now it started.
    days_ago: f64,
    /// Seconds after the start it ended, with the reason; `None`: still live.
    end: Option<(f64, &'static str)>,
    parent: Option<&'static str>,
    extra: Value,
    messages: Vec<Msg>,
    usage: TokenUpdate,
}

fn tokens(
    model: &str,
    input: i64,
    output: i64,
    cache_read: i64,
    cost: f64,
    calls: i64,
) -> TokenUpdate {
    TokenUpdate {
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        model: Some(model.to_owned()),
        estimated_cost_usd: Some(cost),
        billing_provider: Some(
            match model {
                m if m.starts_with("claude") => "anthropic",
                m if m.starts_with("qwen") => "openrouter",
                _ => "openai",
            }
            .to_owned(),
        ),
        api_call_count: calls,
        ..TokenUpdate::default()
    }
}

fn samples() -> Vec<Sample> {
    vec![
        Sample {
            id: "demo-paris",
            source: "cli",
            model: "gpt-5",
            title: "Weather in Paris",
            days_ago: 2.0,
            end: Some((95.0, "user_exit")),
            parent: None,
            extra: json!({"cwd": "/home/demo", "user_id": "demo"}),
            messages: vec![
                msg(
                    "user",
                    0.0,
                    "What's the weather in Paris right now? I'm deciding whether to bike to the Louvre.",
                ),
                call(
                    4.0,
                    "call_weather_1",
                    "weather",
                    json!({"city": "Paris", "units": "metric"}),
                    Some(
                        "The user wants current conditions in Paris to decide about cycling.\nI should call the weather tool instead of guessing.",
                    ),
                ),
                result(
                    5.0,
                    "weather",
                    "call_weather_1",
                    "{\"city\": \"Paris\", \"temp_c\": 18, \"conditions\": \"clear sky\", \"wind_kmh\": 9, \"rain_next_3h_mm\": 0}",
                ),
                msg(
                    "assistant",
                    9.0,
                    "It's 18°C in Paris with a clear sky, light wind (9 km/h) and no rain expected in the next three hours — good weather to bike to the Louvre.",
                ),
                msg("user", 80.0, "Great, thanks!"),
                msg("assistant", 82.0, "Enjoy the ride!"),
            ],
            usage: tokens("gpt-5", 1_240, 212, 0, 0.0037, 3),
        },
        Sample {
            id: "demo-refactor",
            source: "cli",
            model: "claude-sonnet-4",
            title: "Refactor the config parser",
            days_ago: 6.0,
            end: Some((5_400.0, "compression")),
            parent: None,
            extra: json!({"cwd": "/home/demo/src/parser", "git_branch": "refactor-config", "system_prompt": "You are Hermes, a careful coding agent."}),
            messages: vec![
                msg(
                    "user",
                    0.0,
                    "src/config.rs has a 900-line match statement in parse(). Split it into one function per section and keep the tests green.",
                ),
                call(
                    6.0,
                    "call_read_1",
                    "read_file",
                    json!({"path": "src/config.rs"}),
                    Some(
                        "Read the file first; the sections are probably [server], [storage] and [logging].",
                    ),
                ),
                result(
                    7.0,
                    "read_file",
                    "call_read_1",
                    "pub fn parse(input: &str) -> Result<Config, ParseError> {\n    let mut config = Config::default();\n    for (section, line) in lines(input) {\n        match section {\n            \"server\" => { /* 310 lines */ }\n            \"storage\" => { /* 402 lines */ }\n            \"logging\" => { /* 188 lines */ }\n            other => return Err(ParseError::UnknownSection(other.into())),\n        }\n    }\n    Ok(config)\n}",
                ),
                msg(
                    "assistant",
                    30.0,
                    "The three sections are independent. I'll extract parse_server, parse_storage and parse_logging, each taking the section's lines and returning its part of Config.",
                ),
                call(
                    60.0,
                    "call_edit_1",
                    "edit_file",
                    json!({"path": "src/config.rs", "description": "extract parse_server, parse_storage, parse_logging"}),
                    None,
                ),
                result(
                    62.0,
                    "edit_file",
                    "call_edit_1",
                    "Applied 3 edits to src/config.rs (+214 −187).",
                ),
            ],
            usage: tokens("claude-sonnet-4", 48_210, 5_120, 30_000, 0.2214, 9),
        },
        Sample {
            id: "demo-refactor-2",
            source: "cli",
            model: "claude-sonnet-4",
            title: "Refactor the config parser #2",
            days_ago: 6.0 - 5_400.0 / DAY,
            end: Some((1_800.0, "user_exit")),
            parent: Some("demo-refactor"),
            extra: json!({"cwd": "/home/demo/src/parser", "git_branch": "refactor-config"}),
            messages: vec![
                msg(
                    "user",
                    0.0,
                    "Context was compressed. Summary so far: parse() was split into parse_server, parse_storage and parse_logging. Next: run the tests.",
                ),
                call(
                    5.0,
                    "call_test_1",
                    "terminal",
                    json!({"command": "cargo test -p config"}),
                    None,
                ),
                result(
                    40.0,
                    "terminal",
                    "call_test_1",
                    "running 42 tests\n..........................................\ntest result: ok. 42 passed; 0 failed; 0 ignored; finished in 0.84s",
                ),
                msg(
                    "assistant",
                    45.0,
                    "All 42 tests pass. parse() is now 24 lines; each section parser is covered by the existing tests. I'll ask a sub-agent to document the new functions.",
                ),
            ],
            usage: tokens("claude-sonnet-4", 12_040, 1_830, 9_000, 0.0631, 3),
        },
        Sample {
            id: "demo-refactor-docs",
            source: "cli",
            model: "gpt-5-mini",
            title: "Document the section parsers",
            days_ago: 6.0 - 5_500.0 / DAY,
            end: Some((300.0, "completed")),
            parent: Some("demo-refactor-2"),
            extra: json!({"cwd": "/home/demo/src/parser", "model_config": pyjson::to_string(&json!({"_delegate_from": "demo-refactor-2"}))}),
            messages: vec![
                msg(
                    "user",
                    0.0,
                    "Write doc comments for parse_server, parse_storage and parse_logging in src/config.rs.",
                ),
                msg(
                    "assistant",
                    120.0,
                    "Added doc comments to the three functions, with an example of each section's syntax.",
                ),
            ],
            usage: tokens("gpt-5-mini", 3_020, 640, 0, 0.0021, 2),
        },
        Sample {
            id: "demo-refactor-serde",
            source: "cli",
            model: "claude-sonnet-4",
            title: "Config parser: serde experiment",
            days_ago: 5.0,
            end: None,
            parent: Some("demo-refactor"),
            extra: json!({"cwd": "/home/demo/src/parser", "git_branch": "serde-config", "model_config": pyjson::to_string(&json!({"_branched_from": "demo-refactor"}))}),
            messages: vec![
                msg(
                    "user",
                    0.0,
                    "Branching off: what if we replaced the hand-written parser with serde and the toml crate?",
                ),
                msg(
                    "assistant",
                    20.0,
                    "Deriving Deserialize for Config would remove about 700 lines. The catch: today's error messages name the line and section; serde's are less precise unless we keep spans with toml's Spanned<T>.",
                ),
            ],
            usage: tokens("claude-sonnet-4", 6_300, 410, 4_000, 0.0252, 1),
        },
        Sample {
            id: "demo-dinner",
            source: "telegram",
            model: "gpt-5-mini",
            title: "Dinner ideas",
            days_ago: 1.0,
            end: None,
            parent: None,
            extra: json!({"user_id": "tg:48213", "chat_id": "48213", "chat_type": "dm"}),
            messages: vec![
                msg(
                    "user",
                    0.0,
                    "I have chickpeas, spinach and a lemon. Dinner idea for two?",
                ),
                msg(
                    "assistant",
                    6.0,
                    "A lemony chickpea and spinach stew: soften an onion and two garlic cloves in olive oil, add the chickpeas with a pinch of cumin, stir in the spinach until it wilts, then finish with lemon zest and juice. 20 minutes, serves two.",
                ),
                msg("user", 300.0, "Can I make it spicy?"),
                msg(
                    "assistant",
                    305.0,
                    "Yes: stir a spoonful of harissa or chili flakes into the onions, and top with yogurt to balance the heat.",
                ),
            ],
            usage: tokens("gpt-5-mini", 820, 356, 0, 0.0009, 2),
        },
        Sample {
            id: "demo-tokyo",
            source: "discord",
            model: "qwen3-max",
            title: "东京旅行计划",
            days_ago: 3.0,
            end: Some((2_000.0, "user_exit")),
            parent: None,
            extra: json!({"user_id": "discord:7781", "chat_id": "trip-planning", "chat_type": "channel"}),
            messages: vec![
                msg(
                    "user",
                    0.0,
                    "下周去东京旅行，帮我规划三天的行程。我喜欢寺庙和美食。",
                ),
                msg(
                    "assistant",
                    12.0,
                    "第一天：上午参观浅草寺和仲见世商店街，晚上去东京晴空塔看夜景。\n第二天：明治神宫和原宿，下午逛涩谷。\n第三天：在筑地场外市场吃寿司早餐，然后去上野公园和东京国立博物馆。",
                ),
                msg(
                    "user",
                    600.0,
                    "ありがとう！浅草寺の近くでおすすめのラーメン屋はありますか？",
                ),
                msg(
                    "assistant",
                    610.0,
                    "浅草寺の近くなら、あっさりした醤油ラーメンの店が雷門通りに何軒かあります。混雑を避けるなら開店直後の11時ごろがおすすめです。",
                ),
            ],
            usage: tokens("qwen3-max", 2_100, 540, 0, 0.0031, 2),
        },
        Sample {
            id: "demo-digest-old",
            source: "cron",
            model: "gpt-5-mini",
            title: "Nightly issue digest",
            days_ago: 200.0,
            end: Some((40.0, "cron_complete")),
            parent: None,
            extra: json!({"system_prompt": "Summarise yesterday's new GitHub issues in three bullet points."}),
            messages: vec![
                msg("user", 0.0, "Run the nightly digest for hermes-agent."),
                msg(
                    "assistant",
                    30.0,
                    "3 new issues: #6812 search misses words with apostrophes; #6815 gateway reconnect loop on Telegram timeouts; #6819 request: export sessions to Markdown.",
                ),
            ],
            usage: tokens("gpt-5-mini", 2_010, 288, 0, 0.0012, 1),
        },
    ]
}

/// The sample as the library's JSONL export format.
fn sample_jsonl(samples: &[Sample], now: f64) -> CliResult<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    write_json_line(
        &mut out,
        &json!({"format": EXPORT_FORMAT, "version": EXPORT_FORMAT_VERSION, "schema_version": SCHEMA_VERSION}),
    )?;
    let mut total = 0;
    for s in samples {
        let started = (now - s.days_ago * DAY).floor() + 0.25;
        let tool_calls: usize = s
            .messages
            .iter()
            .filter_map(|m| {
                m.tool_calls
                    .as_ref()
                    .and_then(Value::as_array)
                    .map(Vec::len)
            })
            .sum();
        let mut line = Map::new();
        line.insert("type".into(), "session".into());
        line.insert("id".into(), s.id.into());
        line.insert("source".into(), s.source.into());
        line.insert("model".into(), s.model.into());
        line.insert("title".into(), s.title.into());
        line.insert("started_at".into(), started.into());
        line.insert(
            "parent_session_id".into(),
            s.parent.map_or(Value::Null, Into::into),
        );
        if let Some((after, reason)) = s.end {
            line.insert("ended_at".into(), (started + after).into());
            line.insert("end_reason".into(), reason.into());
        }
        line.insert("message_count".into(), s.messages.len().into());
        line.insert("tool_call_count".into(), tool_calls.into());
        if let Value::Object(extra) = &s.extra {
            line.extend(extra.clone());
        }
        write_json_line(&mut out, &Value::Object(line))?;
        for m in &s.messages {
            let mut line = Map::new();
            line.insert("type".into(), "message".into());
            line.insert("session_id".into(), s.id.into());
            line.insert("role".into(), m.role.into());
            line.insert("content".into(), m.content.map_or(Value::Null, Into::into));
            line.insert("timestamp".into(), (started + m.at).into());
            let optional = |v: Option<&str>| v.map_or(Value::Null, Into::into);
            line.insert(
                "tool_calls".into(),
                m.tool_calls
                    .as_ref()
                    .map_or(Value::Null, |c| pyjson::to_string(c).into()),
            );
            line.insert("tool_name".into(), optional(m.tool_name));
            line.insert("tool_call_id".into(), optional(m.tool_call_id));
            line.insert("finish_reason".into(), optional(m.finish_reason));
            line.insert("reasoning".into(), optional(m.reasoning));
            write_json_line(&mut out, &Value::Object(line))?;
            total += 1;
        }
    }
    write_json_line(
        &mut out,
        &json!({"type": "end", "sessions": samples.len(), "messages": total}),
    )?;
    Ok((out, total))
}

/// The sample's "now": its times lie in the days before it.
fn now() -> f64 {
    crate::clock::now()
}

/// `demo`
pub fn demo(ctx: &Context, args: &DemoArgs) -> CliResult {
    let store = ctx.open(Access::Create)?;
    fill(ctx, store.as_ref(), args)?;
    // A file is closed explicitly so that an error of its last checkpoint
    // is told rather than lost in a drop.
    match store.as_sqlite() {
        Some(db) => db.close().map_err(|e| ctx.fail(&e)),
        None => Ok(()),
    }
}

/// Fills the store with the sample and says what to try on it.
fn fill(ctx: &Context, db: &dyn SessionStore, args: &DemoArgs) -> CliResult {
    let existing = session_count(ctx, db)?;
    if existing > 0 && !args.force {
        return Err(CliError::failed(format!(
            "demo: the store at {} already has {existing} session(s); demo only fills an empty store",
            ctx.path.display()
        ))
        .hint(if ctx.server.is_none() {
            "pass --db PATH to make a new sample store (e.g. --db demo.db), or --force to add the sample anyway"
        } else {
            "name a new schema in the URL (`?schema=demo`) to make a new sample store, or pass --force to add the sample anyway"
        }));
    }
    ctx.start_writing(db)?;
    let samples = samples();
    if args.force {
        for s in &samples {
            db.delete_session(s.id).map_err(|e| ctx.fail(&e))?;
        }
    }
    let (lines, message_total) = sample_jsonl(&samples, now())?;
    db.import_jsonl(
        &mut Cursor::new(lines),
        &ImportOptions::default(),
        &mut |_| {},
    )
    .map_err(|e| ctx.fail(&e))?;
    record_usage(db, &samples).map_err(|e| ctx.fail(&e))?;

    let ids: Vec<&str> = samples.iter().map(|s| s.id).collect();
    let out = &ctx.out;
    if out.json {
        return out.json(&json!({
            "path": ctx.path.display().to_string(),
            "sessions": ids,
            "messages": message_total,
        }));
    }
    if out.quiet {
        return Ok(());
    }
    let try_these = [
        "sessions list",
        "sessions show demo-paris",
        "search bike",
        "search 东京",
        "sessions lineage demo-refactor-2",
        "stats",
        "prune --older-than-days 90 --dry-run",
        "export --format jsonl --output demo.jsonl",
    ];
    let mut text = format!(
        "Filled {} with a sample: {} sessions (cli, telegram, discord, cron), {message_total} messages.\nTry:\n",
        ctx.path.display(),
        samples.len()
    );
    let again = store_arg(ctx);
    for command in try_these {
        text.push_str(&format!("  hermes-state{again} {command}\n"));
    }
    out.text(text)
}

/// How the user names the store again, as typed in a shell: ` --db PATH`,
/// ` --database-url 'URL'` (without the password, as every message shows
/// it), or nothing for the default store.
fn store_arg(ctx: &Context) -> String {
    let text = ctx.path.display().to_string();
    if ctx.server.is_some() {
        return format!(" --database-url '{}'", text.replace('\'', r"'\''"));
    }
    let default = crate::store::default_path().ok();
    if default.as_deref() == Some(ctx.path.as_path()) {
        return String::new();
    }
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-~+,:@".contains(c))
    {
        format!(" --db {text}")
    } else {
        format!(" --db '{}'", text.replace('\'', r"'\''"))
    }
}

/// Tokens and costs, as the agent records them after each API call.
fn record_usage(db: &dyn SessionStore, samples: &[Sample]) -> hermes_state::Result<()> {
    for s in samples {
        db.update_token_counts(s.id, &s.usage)?;
    }
    db.record_auxiliary_usage(
        "demo-refactor",
        &AuxiliaryUsage {
            task: "compression".to_owned(),
            model: Some("gpt-5-mini".to_owned()),
            billing_provider: Some("openai".to_owned()),
            input_tokens: 41_800,
            output_tokens: 1_250,
            estimated_cost_usd: Some(0.0129),
            ..AuxiliaryUsage::default()
        },
    )
}
