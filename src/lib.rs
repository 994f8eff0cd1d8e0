//! hotrank: hot-article ranking (`HOT.*`) and leaderboards (`RANK.*`) as native
//! Redis module commands.
//!
//! Layout:
//! - pure core, no Redis: [`detmath`] (`pow`, `exp2`, `log2` with the same
//!   bits on every machine), [`hot`] (decay formula, dedup decision, top-N with
//!   pruning), [`rank`] (score + time packing, layouts), [`keys`] (derived key
//!   names and hash slots), [`parse`] (exact number and time parsing),
//!   [`reshard`] (which slots this node is moving, from `CLUSTER NODES`);
//! - Redis glue: `commands` (handlers), `config` (module configs), `docs`
//!   (what `COMMAND DOCS` says of each command: plain data), `ffi` (the only
//!   place with `unsafe` and raw API calls; it imports nothing above it and
//!   offers generic primitives), and the registration below (the command
//!   table is registered by `commands::register`).
//!
//! No `unwrap()` outside tests (a panic that escaped the guard would abort
//! redis-server): clippy's `unwrap_used` is an error here.

#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod detmath;
pub mod eviction;
pub mod hot;
pub mod keys;
pub mod parse;
pub mod rank;
pub mod reshard;
pub mod shortest;

mod commands;
mod config;
mod docs;
mod ffi;
mod stats;

use redis_module::{configuration::ConfigurationFlags, redis_module, Context, RedisString, Status};

/// The crate's version (`Cargo.toml`), as shown by `INFO hotrank`
/// (`hotrank_version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version as `MODULE LIST` shows it: major * 10000 + minor * 100 +
/// patch (1.2.3 → 10203), as other modules encode theirs.
pub const MODULE_VERSION: i32 = parse_version_part(env!("CARGO_PKG_VERSION_MAJOR")) * 10_000
    + parse_version_part(env!("CARGO_PKG_VERSION_MINOR")) * 100
    + parse_version_part(env!("CARGO_PKG_VERSION_PATCH"));

/// A decimal version component (at compile time; minor and patch below 100).
const fn parse_version_part(s: &str) -> i32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "version parts are decimal");
        v = v * 10 + (b[i] - b'0') as i32;
        i += 1;
    }
    v
}

static QUIET_DEFRAG: ffi::QuietDefrag = ffi::QuietDefrag;

/// MODULE UNLOAD: releases the strings the module kept across commands.
fn deinit(_ctx: &Context) -> Status {
    commands::name_cache::clear();
    Status::Ok
}

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    if let Err(e) = config::apply_module_args(&args) {
        ctx.log_warning(&e);
        return Status::Err;
    }
    ffi::register_info(ctx, info_fields);
    ffi::set_explicit_signals(ctx);
    ffi::follow_configs(ctx, &config::FOLLOWED);
    // The score formatter's tables, built now so no command pays for them.
    shortest::warm_up();
    // Follows this node's slot migrations (issue 37).
    if let Err(e) = commands::migration::register(ctx) {
        ctx.log_warning(&e);
        return Status::Err;
    }
    if let Err(e) = commands::register::register_commands(ctx) {
        ctx.log_warning(&e);
        return Status::Err;
    }
    if let Err(e) = commands::register::set_command_info(ctx) {
        ctx.log_warning(&e);
        return Status::Err;
    }
    Status::Ok
}

/// The `INFO hotrank` fields (the server prefixes each with `hotrank_`,
/// so `version` shows as `hotrank_version`): the version, the counters, then the
/// effective configs.
fn info_fields() -> Vec<(String, ffi::InfoValue)> {
    let mut out = vec![(
        "version".to_string(),
        ffi::InfoValue::Text(VERSION.to_string()),
    )];
    out.extend(
        stats::snapshot()
            .into_iter()
            .map(|(k, v)| (k.to_string(), ffi::InfoValue::Int(v as i64))),
    );
    out.extend(
        config::info_fields()
            .into_iter()
            .map(|(k, v)| (k, ffi::InfoValue::Text(v))),
    );
    out
}

redis_module! {
    name: "hotrank",
    // Evaluated before RedisModule_Init: a second load logs why it fails.
    version: {
        ffi::log_if_name_busy(
            c"hotrank",
            c"hotrank is already loaded in this server: this second loadmodule / MODULE LOAD is refused (MODULE UNLOAD hotrank first to replace it)",
        );
        MODULE_VERSION
    },
    allocator: (ffi::ModuleAlloc, ffi::ModuleAlloc),
    // Not a data type: the hook that keeps the crate's defrag registration
    // from logging a warning on servers without defrag callbacks.
    data_types: [QUIET_DEFRAG],
    init: init,
    deinit: deinit,
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
            [config::TRENDING_HALF_LIFE.name, &config::TRENDING_HALF_LIFE, config::TRENDING_HALF_LIFE.default, config::TRENDING_HALF_LIFE.min, config::TRENDING_HALF_LIFE.max, ConfigurationFlags::DEFAULT, None],
        ],
        string: [
            [config::ALPHA.name, &config::ALPHA, config::ALPHA.default_text(), ConfigurationFlags::DEFAULT, None],
            [config::BETA.name, &config::BETA, config::BETA.default_text(), ConfigurationFlags::DEFAULT, None],
            [config::BASE.name, &config::BASE, config::BASE.default_text(), ConfigurationFlags::DEFAULT, None],
            [config::GAMMA.name, &config::GAMMA, config::GAMMA.default_text(), ConfigurationFlags::DEFAULT, None],
            [config::ReplicateConfig::NAME, &config::REPLICATE, config::ReplicateConfig::DEFAULT, ConfigurationFlags::DEFAULT, None],
        ],
        bool: [],
        enum: [],
        // Off: the crate would set loadmodule arguments as defaults, which
        // skips range checks. `init` applies them through the validators.
        module_args_as_configuration: false,
    ]
}
