//! hotrank: hot-article ranking (`HOT.*`) and leaderboards (`RANK.*`) as native
//! Redis module commands.
//!
//! Layout (see `../shared/STYLE.md`):
//! - pure core, no Redis: [`hot`] (decay formula, dedup decision, top-N with
//!   pruning), [`rank`] (score + time packing, layouts), [`keys`] (derived key
//!   names and hash slots), [`parse`] (exact number and time parsing);
//! - Redis glue: `commands` (handlers), `config` (module configs), `ffi` (the
//!   only place with `unsafe` and raw API calls), and the registration below.

pub mod hot;
pub mod keys;
pub mod parse;
pub mod rank;

mod commands;
mod config;
mod ffi;
mod stats;

use redis_module::{redis_module, Context, RedisString, Status};

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    if let Err(e) = config::apply_prefixed_module_args(args) {
        ctx.log_warning(&format!("hotrank: bad module argument: {e}"));
        return Status::Err;
    }
    ffi::register_info(ctx);
    ffi::set_explicit_signals(ctx);
    ffi::follow_hll_sparse_max(ctx);
    if let Err(e) = ffi::declare_key_specs(ctx) {
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
    commands: [
        ["hot.publish", commands::hot::publish, "write deny-oom fast", 1, 1, 1, ""],
        ["hot.view", commands::hot::view, "write deny-oom", 1, 1, 1, ""],
        ["hot.top", commands::hot::top, "readonly", 1, 1, 1, ""],
        ["hot.stats", commands::hot::stats, "readonly fast", 1, 1, 1, ""],
        ["rank.create", commands::rank::create, "write deny-oom fast", 1, 1, 1, ""],
        ["rank.incr", commands::rank::incr, "write deny-oom fast", 1, 1, 1, ""],
        ["rank.set", commands::rank::set, "write deny-oom fast", 1, 1, 1, ""],
        ["rank.score", commands::rank::score, "readonly fast", 1, 1, 1, ""],
        ["rank.rank", commands::rank::rank, "readonly fast", 1, 1, 1, ""],
        ["rank.range", commands::rank::range, "readonly", 1, 1, 1, ""],
        ["rank.rem", commands::rank::rem, "write fast", 1, 1, 1, ""],
        ["rank.card", commands::rank::card, "readonly fast", 1, 1, 1, ""],
        ["rank.around", commands::rank::around, "readonly", 1, 1, 1, ""],
        ["rank.rangebyscore", commands::rank::rangebyscore, "readonly", 1, 1, 1, ""],
        ["rank.mincr", commands::rank::mincr, "write deny-oom", 1, 1, 1, ""],
    ],
    configurations: [
        i64: [
            ["dedup-seconds", &*config::DEDUP_SECONDS, 900, 0, 4_294_967, redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["dedup-shards", &*config::DEDUP_SHARDS, 4096, 1, 65_536, redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["visitor-max-views", &*config::VISITOR_MAX_VIEWS, 60, 0, 1_000_000_000, redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["visitor-window-seconds", &*config::VISITOR_WINDOW_SECONDS, 3600, 1, 2_592_000, redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["max-articles", &*config::MAX_ARTICLES, 1000, 0, 100_000_000, redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["retention-seconds", &*config::RETENTION_SECONDS, 7_776_000, 60, 315_360_000, redis_module::configuration::ConfigurationFlags::DEFAULT, None],
        ],
        string: [
            ["alpha", &*config::ALPHA, "1.0", redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["beta", &*config::BETA, "1.2", redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["base", &*config::BASE, "2", redis_module::configuration::ConfigurationFlags::DEFAULT, None],
            ["gamma", &*config::GAMMA, "1.5", redis_module::configuration::ConfigurationFlags::DEFAULT, None],
        ],
        bool: [],
        enum: [],
        module_args_as_configuration: true,
    ]
}
