//! The settings of one HOT board: everything that decides what a write to
//! the board stores, kept with the board (in its record, see
//! [`super::record`]) so that a replica, an AOF load or a promoted replica
//! computes the same bytes whatever its own `hotrank.*` configs. Pure Rust,
//! no Redis.
//!
//! Names, defaults and ranges are declared once, here; the `hotrank.*`
//! configs (defaults for new boards) are declared from them.
//!
//! Text form (in the board record, after `<maxViewAt>:<fp>`):
//! `id=<id> alpha=<a> beta=<b> base=<h> gamma=<g> dedup-seconds=<s>
//! dedup-shards=<n> visitor-max-views=<n> visitor-window-seconds=<s>
//! max-articles=<n> retention-seconds=<s>`, space separated, every field
//! present, in that order; then, only on a board that keeps a trending
//! ranking ([`super::trending`]), `trending-half-life-ms=<ms>` and, once
//! the board has a landmark, `trending-landmark=<ms>` and (written since
//! HOT.TOP BY trending skips the retention check it makes needless)
//! `trending-keep=<ms>`. A board without trending has the text it had
//! before trending existed.

use super::{Formula, ALPHA_RANGE, BASE_RANGE, BETA_RANGE, GAMMA_RANGE};
use crate::parse::{format_score, parse_finite_f64, parse_i64};

/// An integer setting: name (as in `hotrank.<name>` and, upper case, in
/// HOT.CREATE / HOT.ALTER), default and inclusive range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntSpec {
    pub name: &'static str,
    pub default: i64,
    pub min: i64,
    pub max: i64,
}

/// `dedup-seconds`: repeat views of a pair within this many seconds count
/// once; 0 = off.
pub const DEDUP_SECONDS: IntSpec = IntSpec {
    name: "dedup-seconds",
    default: 900,
    min: 0,
    max: super::dedup::MAX_WINDOW_MS / 1000,
};
/// `dedup-shards`: dedup strings (shards) of a board (part of their names).
pub const DEDUP_SHARDS: IntSpec = IntSpec {
    name: "dedup-shards",
    default: 4096,
    min: 1,
    max: 65_536,
};
/// `visitor-max-views`: views of one visitor per window above which they are
/// suspicious; 0 = off.
pub const VISITOR_MAX_VIEWS: IntSpec = IntSpec {
    name: "visitor-max-views",
    default: 60,
    min: 0,
    max: 1_000_000_000,
};
/// `visitor-window-seconds`: the window of the visitor view limit.
pub const VISITOR_WINDOW_SECONDS: IntSpec = IntSpec {
    name: "visitor-window-seconds",
    default: 3600,
    min: 1,
    max: 2_592_000,
};
/// `max-articles`: articles the board ZSET keeps; 0 = no limit.
pub const MAX_ARTICLES: IntSpec = IntSpec {
    name: "max-articles",
    default: 1000,
    min: 0,
    max: 100_000_000,
};
/// `retention-seconds`: an article's keys expire this long after its last
/// counted view (default 90 days).
pub const RETENTION_SECONDS: IntSpec = IntSpec {
    name: "retention-seconds",
    default: 7_776_000,
    min: 60,
    max: 315_360_000,
};

/// `trending-half-life`: the half-life (seconds) of the board's trending
/// ranking; 0 = no trending, else from 60 to 315,360,000 (see
/// [`super::trending::valid_half_life`]). In HOT.CREATE / HOT.ALTER a
/// duration as HOT.TOP's WINDOW (`6h`, `90m`, `3600`).
pub const TRENDING_HALF_LIFE: IntSpec = IntSpec {
    name: "trending-half-life",
    default: 0,
    min: 0,
    max: super::trending::MAX_HALF_LIFE_MS / 1000,
};

/// The float settings, in text order, with their ranges.
pub const FLOAT_NAMES: [(&str, (f64, f64)); 4] = [
    ("alpha", ALPHA_RANGE),
    ("beta", BETA_RANGE),
    ("base", BASE_RANGE),
    ("gamma", GAMMA_RANGE),
];

/// The integer settings, in text order.
pub const INT_SPECS: [IntSpec; 6] = [
    DEDUP_SECONDS,
    DEDUP_SHARDS,
    VISITOR_MAX_VIEWS,
    VISITOR_WINDOW_SECONDS,
    MAX_ARTICLES,
    RETENTION_SECONDS,
];

/// A setting's lower-case name (as its config is named) and its value.
pub type Named<T> = (&'static str, T);

/// Every setting of a HOT board.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoardSettings {
    /// Incarnation id (unix ms of the board's creation; 0 for a board made
    /// before settings existed). Part of the dedup and visitor key names
    /// (when not 0), so a board created again starts with no dedup history.
    pub id: i64,
    pub formula: Formula,
    /// In the order of [`INT_SPECS`].
    pub ints: [i64; 6],
    /// Half-life of the trending ranking in ms (0: the board keeps none).
    pub trending_ms: i64,
    /// The trending landmark (unix ms): set by the first counted view
    /// after trending is enabled, moved forward by whole half-lives
    /// ([`super::trending`]). Not a setting a user gives: state kept with
    /// them in the record.
    pub landmark: Option<i64>,
    /// With a landmark: a lower bound (ms) of how long after its time each
    /// view counted into the trending sums leaves its article's counters
    /// before retention can expire them ([`super::trending::view_keep`]),
    /// the smallest over those views; `None` when unknown (a record
    /// written before it was kept), and then HOT.TOP checks every article
    /// it lists. State kept with the settings, as the landmark.
    pub keep: Option<i64>,
}

impl Default for BoardSettings {
    fn default() -> Self {
        BoardSettings {
            id: 0,
            formula: Formula::DEFAULT,
            ints: INT_SPECS.map(|s| s.default),
            trending_ms: 0,
            landmark: None,
            keep: None,
        }
    }
}

/// Why a setting cannot be applied. `Display`: the message without `ERR `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingError {
    /// Not a setting name (as given).
    Unknown(String),
    /// Out of range or not a number: the message.
    Bad(String),
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingError::Unknown(n) => write!(
                f,
                "syntax error: unknown setting '{n}' (ALPHA, BETA, BASE, GAMMA, DEDUP-SECONDS, DEDUP-SHARDS, VISITOR-MAX-VIEWS, VISITOR-WINDOW-SECONDS, MAX-ARTICLES, RETENTION-SECONDS, TRENDING-HALF-LIFE)"
            ),
            SettingError::Bad(m) => f.write_str(m),
        }
    }
}

/// Whether `name` (any case) names a setting.
pub fn is_name(name: &[u8]) -> bool {
    let lower = name.to_ascii_lowercase();
    FLOAT_NAMES.iter().any(|(n, _)| n.as_bytes() == lower)
        || INT_SPECS.iter().any(|s| s.name.as_bytes() == lower)
        || lower == TRENDING_HALF_LIFE.name.as_bytes()
}

/// The error of a bad `TRENDING-HALF-LIFE` (or `hotrank.trending-half-life`).
pub fn trending_range_error(name: &str) -> String {
    format!(
        "{name} must be 0 (no trending) or a whole number of seconds from 60 to {} (a duration such as 6h)",
        TRENDING_HALF_LIFE.max
    )
}

/// Parses a half-life: `0`, or a duration as HOT.TOP's WINDOW (seconds,
/// or with a unit suffix `s|m|h|d`), in ms; checked by
/// [`super::trending::valid_half_life`].
pub fn parse_half_life_ms(name: &str, raw: &[u8]) -> Result<i64, String> {
    let ms = if raw == b"0" {
        0
    } else {
        crate::parse::parse_duration_ms(name, raw).map_err(|_| trending_range_error(name))?
    };
    if !super::trending::valid_half_life(ms) {
        return Err(trending_range_error(name));
    }
    Ok(ms)
}

impl BoardSettings {
    /// Dedup window in ms (0 = off).
    pub fn dedup_ms(&self) -> i64 {
        self.ints[0] * 1000
    }
    /// Dedup shards (strings) of the board.
    pub fn dedup_shards(&self) -> i64 {
        self.ints[1]
    }
    /// Visitor view limit (0 = off).
    pub fn visitor_max_views(&self) -> i64 {
        self.ints[2]
    }
    /// Visitor window in ms.
    pub fn visitor_window_ms(&self) -> i64 {
        self.ints[3] * 1000
    }
    /// Articles the board keeps (0 = no limit).
    pub fn max_articles(&self) -> i64 {
        self.ints[4]
    }
    /// Retention in ms.
    pub fn retention_ms(&self) -> i64 {
        self.ints[5] * 1000
    }
    /// Whether the board keeps a trending ranking.
    pub fn trending(&self) -> bool {
        self.trending_ms > 0
    }

    fn float_mut(&mut self, i: usize) -> &mut f64 {
        match i {
            0 => &mut self.formula.alpha,
            1 => &mut self.formula.beta,
            2 => &mut self.formula.base,
            _ => &mut self.formula.gamma,
        }
    }

    fn float(&self, i: usize) -> f64 {
        [
            self.formula.alpha,
            self.formula.beta,
            self.formula.base,
            self.formula.gamma,
        ][i]
    }

    /// Sets one setting by name (case-insensitive, as in HOT.CREATE) from
    /// its text, validated like the config of that name (`hotrank.<name>`).
    pub fn set(&mut self, name: &[u8], value: &[u8]) -> Result<(), SettingError> {
        let lower = name.to_ascii_lowercase();
        if let Some(i) = FLOAT_NAMES.iter().position(|(n, _)| n.as_bytes() == lower) {
            let (n, (lo, hi)) = FLOAT_NAMES[i];
            let upper = n.to_ascii_uppercase();
            let v =
                parse_finite_f64(&upper, value).map_err(|e| SettingError::Bad(e.to_string()))?;
            if !(lo..=hi).contains(&v) {
                return Err(SettingError::Bad(format!(
                    "{upper} must be in [{lo}, {hi}]"
                )));
            }
            *self.float_mut(i) = v;
            return Ok(());
        }
        if let Some(i) = INT_SPECS.iter().position(|s| s.name.as_bytes() == lower) {
            let s = INT_SPECS[i];
            let upper = s.name.to_ascii_uppercase();
            let bad = || {
                SettingError::Bad(format!(
                    "{upper} must be an integer in [{}, {}]",
                    s.min, s.max
                ))
            };
            let v = parse_i64(&upper, value).map_err(|_| bad())?;
            if !(s.min..=s.max).contains(&v) {
                return Err(bad());
            }
            self.ints[i] = v;
            return Ok(());
        }
        if lower == TRENDING_HALF_LIFE.name.as_bytes() {
            let ms = parse_half_life_ms("TRENDING-HALF-LIFE", value).map_err(SettingError::Bad)?;
            if ms != self.trending_ms {
                self.trending_ms = ms;
                self.landmark = None;
                self.keep = None;
            }
            return Ok(());
        }
        Err(SettingError::Unknown(name.escape_ascii().to_string()))
    }

    /// Applies `name value` pairs in order (all or nothing: on error `self`
    /// is unchanged). Error: the first bad pair, or a name without a value.
    pub fn apply(&mut self, pairs: &[&[u8]]) -> Result<(), SettingError> {
        let mut next = *self;
        for pair in pairs.chunks(2) {
            let [name, value] = pair else {
                return Err(SettingError::Bad(format!(
                    "{} needs a value",
                    pair[0].to_ascii_uppercase().escape_ascii()
                )));
            };
            next.set(name, value)?;
        }
        *self = next;
        Ok(())
    }

    /// The floating-point settings by lower-case name (`alpha`, `beta`,
    /// `base`, `gamma`), then the integer ones (`dedup-seconds`, …), as
    /// HOT.INFO reports them.
    pub fn fields(&self) -> (Vec<Named<f64>>, Vec<Named<i64>>) {
        let floats = (0..FLOAT_NAMES.len())
            .map(|i| (FLOAT_NAMES[i].0, self.float(i)))
            .collect();
        let ints = INT_SPECS
            .iter()
            .zip(self.ints)
            .map(|(s, v)| (s.name, v))
            .collect();
        (floats, ints)
    }

    /// The settings as `name value` pairs, upper-case names (as HOT.CREATE
    /// takes them), without the id.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let mut out = Vec::with_capacity(10);
        for (i, (n, _)) in FLOAT_NAMES.iter().enumerate() {
            out.push((n.to_ascii_uppercase(), format_score(self.float(i))));
        }
        for (i, s) in INT_SPECS.iter().enumerate() {
            out.push((s.name.to_ascii_uppercase(), self.ints[i].to_string()));
        }
        out.push((
            TRENDING_HALF_LIFE.name.to_ascii_uppercase(),
            (self.trending_ms / 1000).to_string(),
        ));
        out
    }

    /// The text form (see the module docs).
    pub fn text(&self) -> String {
        let mut t = format!("id={}", self.id);
        for (i, (n, _)) in FLOAT_NAMES.iter().enumerate() {
            t.push_str(&format!(" {n}={}", format_score(self.float(i))));
        }
        for (i, s) in INT_SPECS.iter().enumerate() {
            t.push_str(&format!(" {}={}", s.name, self.ints[i]));
        }
        if self.trending() {
            t.push_str(&format!(" trending-half-life-ms={}", self.trending_ms));
            if let Some(l) = self.landmark {
                t.push_str(&format!(" trending-landmark={l}"));
                if let Some(k) = self.keep {
                    t.push_str(&format!(" trending-keep={k}"));
                }
            }
        }
        t
    }

    /// Parses [`Self::text`]'s form; `None` for anything else (a missing,
    /// extra, reordered or out-of-range field).
    pub fn parse(text: &[u8]) -> Option<BoardSettings> {
        let mut fields = text.split(|&c| c == b' ');
        let mut field = |name: &str| -> Option<&[u8]> {
            let f = fields.next()?;
            let v = f.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
            Some(v)
        };
        let id = parse_i64("id", field("id")?).ok()?;
        let mut s = BoardSettings {
            id,
            ..BoardSettings::default()
        };
        for (n, _) in FLOAT_NAMES {
            let v = field(n)?;
            s.set(n.as_bytes(), v).ok()?;
        }
        for spec in INT_SPECS {
            let v = field(spec.name)?;
            s.set(spec.name.as_bytes(), v).ok()?;
        }
        let mut rest = fields.peekable();
        if let Some(v) = rest
            .next_if(|f| f.starts_with(b"trending-half-life-ms="))
            .and_then(|f| f.strip_prefix(b"trending-half-life-ms="))
        {
            let ms = parse_i64("trending-half-life-ms", v).ok()?;
            if ms == 0 || !super::trending::valid_half_life(ms) {
                return None;
            }
            s.trending_ms = ms;
            if let Some(v) = rest
                .next_if(|f| f.starts_with(b"trending-landmark="))
                .and_then(|f| f.strip_prefix(b"trending-landmark="))
            {
                s.landmark = Some(parse_i64("trending-landmark", v).ok()?);
                if let Some(v) = rest
                    .next_if(|f| f.starts_with(b"trending-keep="))
                    .and_then(|f| f.strip_prefix(b"trending-keep="))
                {
                    s.keep = Some(parse_i64("trending-keep", v).ok()?);
                }
            }
        }
        if rest.next().is_some() {
            return None;
        }
        Some(s)
    }

    /// [`Self::parse`] through a small per-thread cache of recent texts
    /// (8 entries, most recent first): a view reads its board's record on
    /// every call, and parsing ten numbers costs about 12,000 instructions
    /// where comparing the text costs a few dozen. Same result as `parse`.
    pub fn parse_cached(text: &[u8]) -> Option<BoardSettings> {
        thread_local! {
            static CACHE: std::cell::RefCell<crate::parse::Recent<BoardSettings>> =
                const { std::cell::RefCell::new(crate::parse::Recent::new()) };
        }
        CACHE.with(|c| c.borrow_mut().parse(text, BoardSettings::parse))
    }

    /// Why changing from `self` to `new` is refused: the half-life changes
    /// between two non-zero values while the board has trending data
    /// (`has_data`), which an exact rescore would need every past view for.
    pub fn trending_change_error(&self, new: &BoardSettings, has_data: bool) -> Option<String> {
        (has_data && self.trending() && new.trending() && self.trending_ms != new.trending_ms).then(|| {
            "TRENDING-HALF-LIFE cannot change while the board has trending data: set it to 0 first, then to the new value".to_string()
        })
    }

    /// Whether changing from `self` to `new` changes scores (the formula).
    pub fn rescores(&self, new: &BoardSettings) -> bool {
        self.formula.fingerprint() != new.formula.fingerprint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn text_round_trips() {
        let mut s = BoardSettings {
            id: 1_722_470_400_123,
            ..Default::default()
        };
        s.apply(&[b"GAMMA", b"1.3", b"max-articles", b"50", b"Alpha", b"0.5"])
            .unwrap();
        assert_eq!(s.formula.gamma, 1.3);
        assert_eq!(s.max_articles(), 50);
        let t = s.text();
        assert!(t.starts_with("id=1722470400123 alpha=0.5 beta=1.2 base=2 gamma=1.3 "));
        assert_eq!(BoardSettings::parse(t.as_bytes()), Some(s));
    }

    #[test]
    fn trending_state_round_trips_and_resets() {
        let mut s = BoardSettings::default();
        s.apply(&[b"TRENDING-HALF-LIFE", b"6h"]).unwrap();
        s.landmark = Some(-21_600_000);
        s.keep = Some(7_689_600_000);
        let t = s.text();
        assert!(t.ends_with(
            " trending-half-life-ms=21600000 trending-landmark=-21600000 trending-keep=7689600000"
        ));
        assert_eq!(BoardSettings::parse(t.as_bytes()), Some(s));
        // A record written before `keep` was kept reads as unknown.
        let old = t.replace(" trending-keep=7689600000", "");
        let read = BoardSettings::parse(old.as_bytes()).unwrap();
        assert_eq!((read.landmark, read.keep), (Some(-21_600_000), None));
        // `keep` comes only after a landmark.
        let bad = t.replace(" trending-landmark=-21600000", "");
        assert_eq!(BoardSettings::parse(bad.as_bytes()), None);
        // Another half-life starts trending afresh: landmark and keep go.
        s.apply(&[b"TRENDING-HALF-LIFE", b"0"]).unwrap();
        assert_eq!((s.landmark, s.keep), (None, None));
        assert_eq!(s.text(), BoardSettings::default().text());
    }

    #[test]
    fn bad_input_changes_nothing() {
        let mut s = BoardSettings::default();
        let before = s;
        for bad in [
            &[&b"GAMMA"[..], b"11"][..],
            &[b"GAMMA", b"nan"],
            &[b"BASE", b"0"],
            &[b"ALPHA", b"1", b"BETA"],
            &[b"MAX-ARTICLES", b"-1"],
            &[b"MAX-ARTICLES", b"1.5"],
            &[b"RETENTION-SECONDS", b"59"],
            &[b"DEDUP-SECONDS", b"01"],
            &[b"NOPE", b"1"],
            &[b"ALPHA", b"2", b"VISITOR-WINDOW-SECONDS", b"0"],
        ] {
            assert!(s.apply(bad).is_err(), "{bad:?}");
            assert_eq!(s, before);
        }
    }

    #[test]
    fn foreign_text_is_refused() {
        let good = BoardSettings::default().text();
        assert!(BoardSettings::parse(good.as_bytes()).is_some());
        for bad in [
            String::new(),
            good.replace("gamma=1.5", "gamma=11"),
            good.replace(" base=2", ""),
            format!("{good} x=1"),
            good.replace("id=0", "id=x"),
        ] {
            assert_eq!(BoardSettings::parse(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn the_cache_gives_what_parse_gives() {
        let texts: Vec<String> = (0..20)
            .map(|i| {
                BoardSettings {
                    id: i,
                    ..Default::default()
                }
                .text()
            })
            .collect();
        for round in 0..3 {
            for t in &texts {
                assert_eq!(
                    BoardSettings::parse_cached(t.as_bytes()),
                    BoardSettings::parse(t.as_bytes()),
                    "{round}"
                );
            }
        }
        assert_eq!(BoardSettings::parse_cached(b"id=x"), None);
    }

    proptest! {
        #[test]
        fn any_valid_settings_round_trip(
            id in any::<i64>(),
            a in 0.0f64..1e6, b in 0.0f64..1e6, h in 0.001f64..1e6, g in 0.0f64..10.0,
            ints in proptest::array::uniform6(0i64..1_000_000),
        ) {
            let mut s = BoardSettings { id, formula: Formula { alpha: a, beta: b, base: h, gamma: g }, ..Default::default() };
            for (i, spec) in INT_SPECS.iter().enumerate() {
                s.ints[i] = ints[i].clamp(spec.min, spec.max);
            }
            prop_assert_eq!(BoardSettings::parse(s.text().as_bytes()), Some(s));
        }
    }
}
