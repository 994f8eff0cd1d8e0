//! hotrank: hot-article ranking (`HOT.*`) and leaderboards (`RANK.*`) as native
//! Redis module commands.
//!
//! Layout:
//! - pure core, no Redis: [`hot`] (decay formula, dedup decision, top-N with
//!   pruning), [`rank`] (score + time packing, layouts), [`keys`] (derived key
//!   names and hash slots), [`parse`] (exact number and time parsing);
//! - Redis glue: `commands` (handlers), `config` (module configs), `docs`
//!   (what `COMMAND DOCS` says of each command: plain data), `ffi` (the only
//!   place with `unsafe` and raw API calls), and the registration below.

pub mod hot;
pub mod keys;
pub mod parse;
pub mod rank;
pub mod shortest;

mod commands;
mod config;
mod docs;
mod ffi;
mod stats;

use redis_module::{configuration::ConfigurationFlags, redis_module, Context, RedisString, Status};

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    if let Err(e) = config::apply_module_args(&args) {
        ctx.log_warning(&format!("hotrank: bad module argument: {e}"));
        return Status::Err;
    }
    ffi::register_info(ctx);
    ffi::set_explicit_signals(ctx);
    ffi::follow_hll_sparse_max(ctx);
    // The score formatter's tables, built now so no command pays for them.
    shortest::warm_up();
    if let Err(e) = ffi::register_commands(ctx) {
        ctx.log_warning(&format!("hotrank: {e}"));
        return Status::Err;
    }
    if let Err(e) = ffi::set_command_info(ctx) {
        ctx.log_warning(&format!("hotrank: {e}"));
        return Status::Err;
    }
    Status::Ok
}

redis_module! {
    name: "hotrank",
    version: 1,
    allocator: (ffi::ModuleAlloc, ffi::ModuleAlloc),
    data_types: [],
    init: init,
    // Registered in `init` from the one command table (commands/table.rs).
    commands: [],
    configurations: [
        i64: [
            [config::DEDUP_SECONDS.name, &config::DEDUP_SECONDS, config::DEDUP_SECONDS.default, config::DEDUP_SECONDS.min, config::DEDUP_SECONDS.max, ConfigurationFlags::DEFAULT, None],
            [config::DEDUP_SHARDS.name, &config::DEDUP_SHARDS, config::DEDUP_SHARDS.default, config::DEDUP_SHARDS.min, config::DEDUP_SHARDS.max, ConfigurationFlags::DEFAULT, None],
            [config::VISITOR_MAX_VIEWS.name, &config::VISITOR_MAX_VIEWS, config::VISITOR_MAX_VIEWS.default, config::VISITOR_MAX_VIEWS.min, config::VISITOR_MAX_VIEWS.max, ConfigurationFlags::DEFAULT, None],
            [config::VISITOR_WINDOW_SECONDS.name, &config::VISITOR_WINDOW_SECONDS, config::VISITOR_WINDOW_SECONDS.default, config::VISITOR_WINDOW_SECONDS.min, config::VISITOR_WINDOW_SECONDS.max, ConfigurationFlags::DEFAULT, None],
            [config::MAX_ARTICLES.name, &config::MAX_ARTICLES, config::MAX_ARTICLES.default, config::MAX_ARTICLES.min, config::MAX_ARTICLES.max, ConfigurationFlags::DEFAULT, None],
            [config::RETENTION_SECONDS.name, &config::RETENTION_SECONDS, config::RETENTION_SECONDS.default, config::RETENTION_SECONDS.min, config::RETENTION_SECONDS.max, ConfigurationFlags::DEFAULT, None],
        ],
        string: [
            [config::ALPHA.name, &config::ALPHA, config::ALPHA.default_text(), ConfigurationFlags::DEFAULT, None],
            [config::BETA.name, &config::BETA, config::BETA.default_text(), ConfigurationFlags::DEFAULT, None],
            [config::BASE.name, &config::BASE, config::BASE.default_text(), ConfigurationFlags::DEFAULT, None],
            [config::GAMMA.name, &config::GAMMA, config::GAMMA.default_text(), ConfigurationFlags::DEFAULT, None],
        ],
        bool: [],
        enum: [],
        // Off: the crate would set loadmodule arguments as defaults, which
        // skips range checks. `init` applies them through the validators.
        module_args_as_configuration: false,
    ]
}
