//! Module configs (`CONFIG GET/SET hotrank.*`, loadmodule arguments), validated.

use crate::hot::Formula;
use lazy_static::lazy_static;
use redis_module::{
    configuration::ConfigurationContext, ConfigurationValue, RedisError, RedisString,
};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// A float config stored as its bit pattern, with an inclusive valid range.
pub struct FloatConfig {
    name: &'static str,
    bits: AtomicU64,
    min: f64,
    max: f64,
    min_exclusive: bool,
    /// The last string handed to CONFIG GET (see `ffi::config_string`).
    shown: std::sync::atomic::AtomicPtr<redis_module::raw::RedisModuleString>,
}

impl FloatConfig {
    fn new(name: &'static str, default: f64, min: f64, max: f64, min_exclusive: bool) -> Self {
        FloatConfig {
            name,
            bits: AtomicU64::new(default.to_bits()),
            min,
            max,
            min_exclusive,
            shown: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The current value.
    pub fn value(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }
}

impl ConfigurationValue<RedisString> for FloatConfig {
    fn get(&self, _ctx: &ConfigurationContext) -> RedisString {
        crate::ffi::config_string(&self.shown, &crate::parse::format_score(self.value()))
    }

    fn set(&self, _ctx: &ConfigurationContext, val: RedisString) -> Result<(), RedisError> {
        self.set_bytes(val.as_slice()).map_err(RedisError::String)
    }
}

impl FloatConfig {
    /// Validates and stores a new value. The error has no `ERR ` prefix:
    /// CONFIG SET adds its own.
    pub fn set_bytes(&self, raw: &[u8]) -> Result<(), String> {
        let name = format!("hotrank.{}", self.name);
        let v = crate::parse::parse_finite_f64(&name, raw)
            .map_err(|e| e.trim_start_matches("ERR ").to_string())?;
        let low_ok = if self.min_exclusive {
            v > self.min
        } else {
            v >= self.min
        };
        if !low_ok || v > self.max {
            let lb = if self.min_exclusive { "(" } else { "[" };
            return Err(format!("{name} must be in {lb}{}, {}]", self.min, self.max));
        }
        self.bits.store(v.to_bits(), Ordering::Relaxed);
        Ok(())
    }
}

lazy_static! {
    /// `hotrank.alpha`: weight of a page view. Default 1.0, range [0, 1e6].
    pub static ref ALPHA: FloatConfig = FloatConfig::new("alpha", 1.0, 0.0, 1e6, false);
    /// `hotrank.beta`: weight of a unique visitor. Default 1.2, range [0, 1e6].
    pub static ref BETA: FloatConfig = FloatConfig::new("beta", 1.2, 0.0, 1e6, false);
    /// `hotrank.base`: hours added to an article's age. Default 2, range (0, 1e6].
    pub static ref BASE: FloatConfig = FloatConfig::new("base", 2.0, 0.0, 1e6, true);
    /// `hotrank.gamma`: gravity exponent. Default 1.5, range [0, 10].
    pub static ref GAMMA: FloatConfig = FloatConfig::new("gamma", 1.5, 0.0, 10.0, false);
    /// `hotrank.dedup-seconds`: a visitor's repeat views of an article within
    /// this many seconds (of view time) count once. Default 900, 0 turns dedup off.
    pub static ref DEDUP_SECONDS: AtomicI64 = AtomicI64::new(900);
    /// `hotrank.dedup-shards`: strings per dedup generation of a board; about
    /// active pairs / 200 keeps each lookup short. Default 4096.
    pub static ref DEDUP_SHARDS: AtomicI64 = AtomicI64::new(4096);
    /// `hotrank.visitor-max-views`: views of one visitor on one board within
    /// `visitor-window-seconds` above which it is suspicious. Default 60, 0 turns it off.
    pub static ref VISITOR_MAX_VIEWS: AtomicI64 = AtomicI64::new(60);
    /// `hotrank.visitor-window-seconds`: the window of the visitor view limit. Default 3600.
    pub static ref VISITOR_WINDOW_SECONDS: AtomicI64 = AtomicI64::new(3600);
    /// `hotrank.max-articles`: articles a HOT board keeps. Default 1000, 0 = no limit.
    pub static ref MAX_ARTICLES: AtomicI64 = AtomicI64::new(1000);
    /// `hotrank.retention-seconds`: per-article keys of an article not viewed
    /// for this long expire. Default 7776000 (90 days).
    pub static ref RETENTION_SECONDS: AtomicI64 = AtomicI64::new(7_776_000);
}

/// Reads an integer config.
pub fn get(c: &AtomicI64) -> i64 {
    c.load(Ordering::Relaxed)
}

/// The formula as configured now.
pub fn formula() -> Formula {
    Formula {
        alpha: ALPHA.value(),
        beta: BETA.value(),
        base: BASE.value(),
        gamma: GAMMA.value(),
    }
}

/// The dedup window in milliseconds.
pub fn dedup_ms() -> i64 {
    DEDUP_SECONDS.load(Ordering::Relaxed) * 1000
}

/// Applies `hotrank.<name> <value>` pairs given as loadmodule arguments (the
/// unprefixed `<name> <value>` form is handled by the redis-module crate).
/// Error: the config's own validation message.
pub fn apply_prefixed_module_args(args: &[RedisString]) -> Result<(), String> {
    for pair in args.chunks(2) {
        let [name, value] = pair else {
            return Err(format!("module argument {} has no value", pair[0]));
        };
        let Some(short) = name.as_slice().strip_prefix(b"hotrank.") else {
            continue;
        };
        let floats: [(&[u8], &FloatConfig); 4] = [
            (b"alpha", &ALPHA),
            (b"beta", &BETA),
            (b"base", &BASE),
            (b"gamma", &GAMMA),
        ];
        if let Some((_, cfg)) = floats.iter().find(|(n, _)| *n == short) {
            cfg.set_bytes(value.as_slice())?;
        } else if let Some((n, var, _, min, max)) =
            int_configs().into_iter().find(|c| c.0.as_bytes() == short)
        {
            match crate::parse::parse_i64(n, value.as_slice()) {
                Ok(v) if (min..=max).contains(&v) => var.store(v, Ordering::Relaxed),
                _ => return Err(format!("hotrank.{n} must be an integer in [{min}, {max}]")),
            }
        } else {
            return Err(format!("unknown config {name}"));
        }
    }
    Ok(())
}

/// The integer configs: (name, variable, default, min, max). Registered in
/// `lib.rs` with the same values.
pub fn int_configs() -> [(&'static str, &'static AtomicI64, i64, i64, i64); 6] {
    [
        (
            "dedup-seconds",
            &DEDUP_SECONDS,
            900,
            0,
            crate::hot::dedup::MAX_WINDOW_MS / 1000,
        ),
        ("dedup-shards", &DEDUP_SHARDS, 4096, 1, 65_536),
        (
            "visitor-max-views",
            &VISITOR_MAX_VIEWS,
            60,
            0,
            1_000_000_000,
        ),
        (
            "visitor-window-seconds",
            &VISITOR_WINDOW_SECONDS,
            3600,
            1,
            2_592_000,
        ),
        ("max-articles", &MAX_ARTICLES, 1000, 0, 100_000_000),
        (
            "retention-seconds",
            &RETENTION_SECONDS,
            7_776_000,
            60,
            315_360_000,
        ),
    ]
}
