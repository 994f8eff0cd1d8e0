//! Module configs (`CONFIG GET/SET hotrank.*`, loadmodule arguments), validated.
//!
//! Each config's name, default and range are declared once, here (the
//! formula's in [`crate::hot`]); `lib.rs` registers them from these
//! declarations. Every path that sets a value goes through the config's one
//! validator ([`FloatConfig::set_bytes`], [`IntConfig::set`]): CONFIG SET,
//! `hotrank.<name> value` lines in redis.conf (through Redis, which calls
//! the setters), and loadmodule arguments in both forms ([`apply_module_args`]).
//!
//! Configs are not replicated: a replica needs the same settings as its master.

use crate::hot::settings::{self, BoardSettings};
use crate::hot::{self, Formula};
use redis_module::{
    configuration::ConfigurationContext, ConfigurationValue, RedisError, RedisString,
};
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, Ordering};
use std::sync::OnceLock;

/// A float config stored as its bit pattern, with an inclusive valid range.
pub struct FloatConfig {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    bits: AtomicU64,
    /// The default as text, for registration (made once, on first use).
    default_text: OnceLock<String>,
    /// The last string handed to CONFIG GET (see `ffi::config_string`).
    shown: AtomicPtr<redis_module::raw::RedisModuleString>,
}

impl FloatConfig {
    const fn new(name: &'static str, default: f64, (min, max): (f64, f64)) -> Self {
        FloatConfig {
            name,
            default,
            min,
            max,
            bits: AtomicU64::new(default.to_bits()),
            default_text: OnceLock::new(),
            shown: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The current value.
    pub fn value(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }

    /// The default as the text registered with Redis (which sets it through
    /// [`Self::set_bytes`] like any other value).
    pub fn default_text(&'static self) -> &'static str {
        self.default_text
            .get_or_init(|| crate::parse::format_score(self.default))
    }

    /// Validates and stores a new value: finite and within `[min, max]`.
    /// The error names the config and has no `ERR ` prefix (CONFIG SET adds its own).
    pub fn set_bytes(&self, raw: &[u8]) -> Result<(), String> {
        let name = format!("hotrank.{}", self.name);
        let v = crate::parse::parse_finite_f64(&name, raw).map_err(|e| e.to_string())?;
        if !(self.min..=self.max).contains(&v) {
            return Err(format!("{name} must be in [{}, {}]", self.min, self.max));
        }
        self.bits.store(v.to_bits(), Ordering::Relaxed);
        Ok(())
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

/// An integer config with an inclusive valid range.
pub struct IntConfig {
    pub name: &'static str,
    pub default: i64,
    pub min: i64,
    pub max: i64,
    /// Smallest value but 0 (0 for a config whose range is `min..=max`):
    /// `hotrank.trending-half-life` is 0 (off) or from 60.
    pub floor: i64,
    value: AtomicI64,
}

impl IntConfig {
    const fn spec(s: settings::IntSpec) -> Self {
        IntConfig {
            name: s.name,
            default: s.default,
            min: s.min,
            max: s.max,
            floor: 0,
            value: AtomicI64::new(s.default),
        }
    }

    /// A config that is 0 or from `floor` to the spec's max.
    const fn with_floor(s: settings::IntSpec, floor: i64) -> Self {
        let mut c = IntConfig::spec(s);
        c.floor = floor;
        c
    }

    /// The current value.
    pub fn value(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    /// Validates and stores a new value. The error names the config and its range.
    pub fn set(&self, v: i64) -> Result<(), String> {
        if !(self.min..=self.max).contains(&v) || (v != 0 && v < self.floor) {
            return Err(self.range_error());
        }
        self.value.store(v, Ordering::Relaxed);
        Ok(())
    }

    /// Parses (an integer, as CONFIG SET takes it) and stores a new value.
    pub fn set_bytes(&self, raw: &[u8]) -> Result<(), String> {
        let v = crate::parse::parse_i64(self.name, raw).map_err(|_| self.range_error())?;
        self.set(v)
    }

    fn range_error(&self) -> String {
        if self.floor > 0 {
            return settings::trending_range_error(&format!("hotrank.{}", self.name));
        }
        format!(
            "hotrank.{} must be an integer in [{}, {}]",
            self.name, self.min, self.max
        )
    }
}

impl ConfigurationValue<i64> for IntConfig {
    fn get(&self, _ctx: &ConfigurationContext) -> i64 {
        self.value()
    }

    fn set(&self, _ctx: &ConfigurationContext, val: i64) -> Result<(), RedisError> {
        IntConfig::set(self, val).map_err(RedisError::String)
    }
}

/// `hotrank.alpha`: weight of a page view (see [`Formula::alpha`]).
pub static ALPHA: FloatConfig = FloatConfig::new("alpha", Formula::DEFAULT.alpha, hot::ALPHA_RANGE);
/// `hotrank.beta`: weight of a unique visitor (see [`Formula::beta`]).
pub static BETA: FloatConfig = FloatConfig::new("beta", Formula::DEFAULT.beta, hot::BETA_RANGE);
/// `hotrank.base`: hours added to an article's age (see [`Formula::base`]).
pub static BASE: FloatConfig = FloatConfig::new("base", Formula::DEFAULT.base, hot::BASE_RANGE);
/// `hotrank.gamma`: gravity exponent (see [`Formula::gamma`]).
pub static GAMMA: FloatConfig = FloatConfig::new("gamma", Formula::DEFAULT.gamma, hot::GAMMA_RANGE);

/// `hotrank.dedup-seconds`: the default `DEDUP-SECONDS` of new boards (see
/// [`settings::DEDUP_SECONDS`]): a visitor's repeat views of an article
/// within this many seconds (of view time) count once. 0 turns dedup off.
pub static DEDUP_SECONDS: IntConfig = IntConfig::spec(settings::DEDUP_SECONDS);
/// `hotrank.dedup-shards`: dedup strings (shards) of a new board;
/// about active pairs / 200 keeps each lookup short.
pub static DEDUP_SHARDS: IntConfig = IntConfig::spec(settings::DEDUP_SHARDS);
/// `hotrank.visitor-max-views`: views of one visitor on one board within
/// `visitor-window-seconds` above which it is suspicious. 0 turns it off.
pub static VISITOR_MAX_VIEWS: IntConfig = IntConfig::spec(settings::VISITOR_MAX_VIEWS);
/// `hotrank.visitor-window-seconds`: the window of the visitor view limit.
pub static VISITOR_WINDOW_SECONDS: IntConfig = IntConfig::spec(settings::VISITOR_WINDOW_SECONDS);
/// `hotrank.max-articles`: articles a new HOT board keeps. 0 = no limit.
pub static MAX_ARTICLES: IntConfig = IntConfig::spec(settings::MAX_ARTICLES);
/// `hotrank.retention-seconds`: per-article keys of an article not viewed
/// for this long expire (default 90 days).
pub static RETENTION_SECONDS: IntConfig = IntConfig::spec(settings::RETENTION_SECONDS);
/// `hotrank.trending-half-life` (seconds): the half-life of the trending
/// ranking of boards made from now on; 0 (the default) = none, else 60 to
/// 315,360,000.
pub static TRENDING_HALF_LIFE: IntConfig = IntConfig::with_floor(
    settings::TRENDING_HALF_LIFE,
    crate::hot::trending::MIN_HALF_LIFE_MS / 1000,
);

/// Every float config.
pub static FLOATS: [&FloatConfig; 4] = [&ALPHA, &BETA, &BASE, &GAMMA];

/// Every integer config.
pub static INTS: [&IntConfig; 6] = [
    &DEDUP_SECONDS,
    &DEDUP_SHARDS,
    &VISITOR_MAX_VIEWS,
    &VISITOR_WINDOW_SECONDS,
    &MAX_ARTICLES,
    &RETENTION_SECONDS,
];

/// The formula as configured now.
/// Every integer config: [`INTS`] (the board settings of [`INT_SPECS`]),
/// then `hotrank.trending-half-life`.
///
/// [`INT_SPECS`]: settings::INT_SPECS
pub fn all_ints() -> impl Iterator<Item = &'static IntConfig> {
    INTS.into_iter().chain([&TRENDING_HALF_LIFE])
}

pub fn formula() -> Formula {
    Formula {
        alpha: ALPHA.value(),
        beta: BETA.value(),
        base: BASE.value(),
        gamma: GAMMA.value(),
    }
}

/// The settings a board created now gets: the configs' values, with
/// incarnation id `id`.
pub fn board_settings(id: i64) -> BoardSettings {
    BoardSettings {
        id,
        formula: formula(),
        ints: INTS.map(|c| c.value()),
        trending_ms: TRENDING_HALF_LIFE.value() * 1000,
        landmark: None,
        keep: None,
    }
}

/// How writes replicate (`hotrank.replicate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replicate {
    /// Each write replicates as the plain commands of its effects (a replica
    /// or AOF without the module can load them). The default.
    Effects,
    /// Each write replicates as one hotrank command with its clock spelled
    /// out (a replica and the AOF load need the module).
    Commands,
}

static REPLICATE_COMMANDS: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The current `hotrank.replicate`.
pub fn replicate() -> Replicate {
    if REPLICATE_COMMANDS.load(Ordering::Relaxed) {
        Replicate::Commands
    } else {
        Replicate::Effects
    }
}

/// `hotrank.replicate` as a string config (`effects` or `commands`).
pub struct ReplicateConfig {
    /// The last string handed to CONFIG GET (see `ffi::config_string`).
    shown: AtomicPtr<redis_module::raw::RedisModuleString>,
}

/// `hotrank.replicate`: how HOT and RANK writes replicate, `effects` (default) or
/// `commands` (see the README, Replication).
pub static REPLICATE: ReplicateConfig = ReplicateConfig {
    shown: AtomicPtr::new(std::ptr::null_mut()),
};

impl ReplicateConfig {
    pub const NAME: &'static str = "replicate";
    pub const DEFAULT: &'static str = "effects";
}

impl ConfigurationValue<RedisString> for ReplicateConfig {
    fn get(&self, _ctx: &ConfigurationContext) -> RedisString {
        let v = match replicate() {
            Replicate::Effects => "effects",
            Replicate::Commands => "commands",
        };
        crate::ffi::config_string(&self.shown, v)
    }

    fn set(&self, _ctx: &ConfigurationContext, val: RedisString) -> Result<(), RedisError> {
        set_replicate(val.as_slice()).map_err(RedisError::String)
    }
}

/// Sets `hotrank.replicate` from its text (`effects` or `commands`, any case).
pub fn set_replicate(raw: &[u8]) -> Result<(), String> {
    let v = match raw.to_ascii_lowercase().as_slice() {
        b"effects" => false,
        b"commands" => true,
        _ => return Err("hotrank.replicate must be effects or commands".into()),
    };
    REPLICATE_COMMANDS.store(v, Ordering::Relaxed);
    Ok(())
}

/// Sets config `name` (without the `hotrank.` prefix) from its text, through
/// the config's validator. Error: the validator's message, or an unknown name.
pub fn set_by_name(name: &[u8], value: &[u8]) -> Result<(), String> {
    if let Some(c) = FLOATS.iter().find(|c| c.name.as_bytes() == name) {
        c.set_bytes(value)
    } else if let Some(c) = all_ints().find(|c| c.name.as_bytes() == name) {
        c.set_bytes(value)
    } else if name == b"replicate" {
        set_replicate(value)
    } else {
        Err(format!("unknown config '{}'", name.escape_ascii()))
    }
}

/// Applies loadmodule arguments: `<name> <value>` pairs, each name with or
/// without the `hotrank.` prefix, in order, each through its config's
/// validator. Applied after redis.conf's `hotrank.*` lines, so these win.
/// Error (the module then refuses to load): one line about the first bad
/// pair, naming it and giving the valid range or the valid names, e.g.
/// `bad loadmodule argument 'gamma abc': hotrank.gamma must be a number in [0, 10]`.
pub fn apply_module_args(args: &[&[u8]]) -> Result<(), String> {
    for pair in args.chunks(2) {
        let [name, value] = pair else {
            return Err(format!(
                "bad loadmodule argument '{}': it has no value (the arguments are \
                 name value pairs, e.g. gamma 1.5)",
                pair[0].escape_ascii()
            ));
        };
        let short = name.strip_prefix(b"hotrank.").unwrap_or(name);
        let what = format!("{} {}", name.escape_ascii(), value.escape_ascii());
        let float = FLOATS.iter().find(|c| c.name.as_bytes() == short);
        let known = float.is_some()
            || all_ints().any(|c| c.name.as_bytes() == short)
            || short == ReplicateConfig::NAME.as_bytes();
        if !known {
            let names: Vec<&str> = FLOATS
                .iter()
                .map(|c| c.name)
                .chain(all_ints().map(|c| c.name))
                .chain([ReplicateConfig::NAME])
                .collect();
            return Err(format!(
                "bad loadmodule argument '{what}': no config '{}'; valid names (with or \
                 without the hotrank. prefix): {}",
                name.escape_ascii(),
                names.join(", ")
            ));
        }
        set_by_name(short, value).map_err(|e| match float {
            // Its own message says "finite" or the range: give both.
            Some(c) => format!(
                "bad loadmodule argument '{what}': hotrank.{} must be a number in [{}, {}]",
                c.name, c.min, c.max
            ),
            None => format!("bad loadmodule argument '{what}': {e}"),
        })?;
    }
    Ok(())
}

/// The formula fingerprint and every config's current value, as INFO fields
/// (`formula_fingerprint`, `config_<name>` with `_` for `-`).
pub fn info_fields() -> Vec<(String, String)> {
    let fp = formula().fingerprint();
    let mut out = vec![(
        "formula_fingerprint".to_string(),
        String::from_utf8_lossy(&fp).into_owned(),
    )];
    for c in FLOATS {
        out.push((
            format!("config_{}", c.name),
            crate::parse::format_score(c.value()),
        ));
    }
    for c in all_ints() {
        out.push((
            format!("config_{}", c.name.replace('-', "_")),
            c.value().to_string(),
        ));
    }
    // Whether the server's eviction policy may evict board identity keys
    // (docs/eviction.md), and that policy.
    out.push((
        "eviction_unsafe".to_string(),
        u8::from(crate::eviction::is_unsafe()).to_string(),
    ));
    out.push(("maxmemory_policy".to_string(), crate::eviction::policy()));
    out
}

/// Reads the server's `maxmemory-policy` and `maxmemory` into
/// [`crate::eviction`], and logs its warning when the policy became unsafe
/// for boards (once per change). Run at load time and after every CONFIG
/// SET of either ([`crate::ffi::follow_configs`]).
pub fn follow_eviction(ctx: &redis_module::Context) {
    let policy = crate::ffi::config_get(ctx, "maxmemory-policy").unwrap_or_default();
    let maxmemory = crate::ffi::config_get(ctx, "maxmemory")
        .and_then(|m| m.parse::<u64>().ok())
        .unwrap_or(0);
    if crate::eviction::store(&policy, maxmemory) {
        ctx.log_warning(&crate::eviction::warning(&policy));
    }
}

/// The server configs the module follows besides its own:
/// [`follow_eviction`]'s.
pub static FOLLOWED: [crate::ffi::ConfigWatch; 1] =
    [(&["maxmemory-policy", "maxmemory"], follow_eviction)];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_within_its_range() {
        for c in FLOATS {
            assert!((c.min..=c.max).contains(&c.default), "{}", c.name);
        }
        for c in all_ints() {
            assert!((c.min..=c.max).contains(&c.default), "{}", c.name);
        }
        let d = Formula::default();
        assert_eq!(
            [ALPHA.default, BETA.default, BASE.default, GAMMA.default],
            [d.alpha, d.beta, d.base, d.gamma]
        );
    }

    #[test]
    fn default_texts_read_back_as_the_defaults() {
        for c in FLOATS {
            let back = crate::parse::parse_finite_f64(c.name, c.default_text().as_bytes());
            assert_eq!(back, Ok(c.default), "{}", c.name);
        }
    }
}
