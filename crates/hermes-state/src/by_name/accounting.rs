//! api.md §3: token and cost accounting.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
        // api.md §3: accounting
        "update_token_counts" => {
            args.only(&TOKEN_KEYS)?;
            let update = TokenUpdate {
                input_tokens: args.i64_or("input_tokens", 0)?,
                output_tokens: args.i64_or("output_tokens", 0)?,
                model: owned(args.opt_str("model")?),
                cache_read_tokens: args.i64_or("cache_read_tokens", 0)?,
                cache_write_tokens: args.i64_or("cache_write_tokens", 0)?,
                reasoning_tokens: args.i64_or("reasoning_tokens", 0)?,
                estimated_cost_usd: args.opt_f64("estimated_cost_usd")?,
                actual_cost_usd: args.opt_f64("actual_cost_usd")?,
                cost_status: owned(args.opt_str("cost_status")?),
                cost_source: owned(args.opt_str("cost_source")?),
                pricing_version: owned(args.opt_str("pricing_version")?),
                billing_provider: owned(args.opt_str("billing_provider")?),
                billing_base_url: owned(args.opt_str("billing_base_url")?),
                billing_mode: owned(args.opt_str("billing_mode")?),
                api_call_count: args.i64_or("api_call_count", 0)?,
                absolute: args.bool_or("absolute", false),
            };
            db.update_token_counts(args.str("session_id")?, &update)?;
            Ok(NONE)
        }
        "record_auxiliary_usage" => {
            args.only(&[
                "session_id",
                "task",
                "model",
                "billing_provider",
                "billing_base_url",
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "reasoning_tokens",
                "estimated_cost_usd",
            ])?;
            let usage = AuxiliaryUsage {
                task: args.str("task")?.to_owned(),
                model: owned(args.opt_str("model")?),
                billing_provider: owned(args.opt_str("billing_provider")?),
                billing_base_url: owned(args.opt_str("billing_base_url")?),
                input_tokens: args.i64_or("input_tokens", 0)?,
                output_tokens: args.i64_or("output_tokens", 0)?,
                cache_read_tokens: args.i64_or("cache_read_tokens", 0)?,
                cache_write_tokens: args.i64_or("cache_write_tokens", 0)?,
                reasoning_tokens: args.i64_or("reasoning_tokens", 0)?,
                estimated_cost_usd: args.opt_f64("estimated_cost_usd")?,
            };
            db.record_auxiliary_usage(args.str("session_id")?, &usage)?;
            Ok(NONE)
        }
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
