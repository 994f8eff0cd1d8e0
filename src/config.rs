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
}

impl FloatConfig {
    fn new(name: &'static str, default: f64, min: f64, max: f64, min_exclusive: bool) -> Self {
        FloatConfig {
            name,
            bits: AtomicU64::new(default.to_bits()),
            min,
            max,
            min_exclusive,
        }
    }

    /// The current value.
    pub fn value(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }
}

impl ConfigurationValue<RedisString> for FloatConfig {
    fn get(&self, _ctx: &ConfigurationContext) -> RedisString {
        RedisString::create(None, crate::parse::format_score(self.value()).as_str())
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
        } else if short == b"dedup-seconds" {
            match crate::parse::parse_i64("hotrank.dedup-seconds", value.as_slice()) {
                Ok(v) if (0..=31_536_000).contains(&v) => DEDUP_SECONDS.store(v, Ordering::Relaxed),
                _ => return Err("hotrank.dedup-seconds must be an integer in [0, 31536000]".into()),
            }
        } else {
            return Err(format!("unknown config {name}"));
        }
    }
    Ok(())
}
