//! Exact parsing of command arguments: integers, unix times with up to three
//! decimals, durations and finite floats. Pure Rust, no Redis.
//!
//! Errors are typed ([`ArgError`]): each message is written once, in its
//! `Display`, and names the argument; the glue sends it as `ERR <message>`,
//! as Redis clients expect (`commands::Fail::err` adds the prefix).

/// Latest accepted unix time: 9999-12-31T23:59:59.999Z, in milliseconds.
pub const MAX_TIME_MS: i64 = 253_402_300_799_999;

/// Why an argument was refused; `name` is the argument's name as the
/// command's syntax gives it (`AT`, `delta`, `LIMIT` …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgError {
    /// Not valid UTF-8, so not a number at all.
    NotNumber { name: String },
    /// Not a signed 64-bit decimal integer.
    NotInteger { name: String },
    /// Not unix seconds with up to three decimals in 0 ..= 253402300799.
    NotTime { name: String },
    /// Not a positive duration of at most 100 years.
    NotDuration { name: String },
    /// Not an integer in 1 ..= max.
    NotCount { name: String, max: i64 },
    /// Not a finite float.
    NotFinite { name: String },
}

impl std::fmt::Display for ArgError {
    /// The message without the `ERR ` prefix.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgError::NotNumber { name } => write!(f, "{name} is not a number"),
            ArgError::NotInteger { name } => write!(f, "{name} is not an integer or out of range"),
            ArgError::NotTime { name } => write!(
                f,
                "{name} must be unix seconds (an integer or a decimal with up to 3 digits) \
                 between 0 and 253402300799"
            ),
            ArgError::NotDuration { name } => write!(
                f,
                "{name} must be a positive duration in seconds or with a unit s, m, h or d \
                 (e.g. 72h)"
            ),
            ArgError::NotCount { name, max } => {
                write!(f, "{name} must be an integer between 1 and {max}")
            }
            ArgError::NotFinite { name } => write!(f, "{name} must be a finite number"),
        }
    }
}

fn text<'a>(name: &str, raw: &'a [u8]) -> Result<&'a str, ArgError> {
    std::str::from_utf8(raw).map_err(|_| ArgError::NotNumber { name: name.into() })
}

/// Parses a signed 64-bit decimal integer exactly as the server's own
/// `string2ll` does (the rule behind INCRBY, HINCRBY, `OBJECT ENCODING int`
/// and every integer argument): `0`, or an optional `-` then a digit `1`–`9`
/// then digits, at most 20 bytes, in `i64` range. So no sign `+`, no leading
/// zeros (`05`, `00`), no `-0`, no spaces, no exponent or hex. A value stored
/// in a key is accepted only where the server would accept it, so a relative
/// effect (`INCRBY … 1`) evaluated by a replica or an AOF load lands on the
/// same number the module computed.
///
/// Errors: [`ArgError::NotNumber`] (not UTF-8), [`ArgError::NotInteger`].
pub fn parse_i64(name: &str, raw: &[u8]) -> Result<i64, ArgError> {
    match fast_i64(raw) {
        Some(v) => Ok(v),
        None => parse_i64_checked(name, raw),
    }
}

/// [`parse_i64`] on the bytes, without UTF-8 decoding: `Some` for exactly
/// the texts `string2ll` accepts (the hot path: counters, times, record
/// fields), `None` for any other, which [`parse_i64_checked`] then refuses
/// with the right error.
fn fast_i64(raw: &[u8]) -> Option<i64> {
    let (neg, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    if raw.len() > 20 || digits.is_empty() {
        return None;
    }
    if digits[0] == b'0' {
        return (raw == b"0").then_some(0);
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    if neg {
        // -2^63 is the one value whose magnitude is not an i64.
        (v <= 1 << 63).then(|| (v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// [`parse_i64`] through UTF-8 text: the errors.
fn parse_i64_checked(name: &str, raw: &[u8]) -> Result<i64, ArgError> {
    let s = text(name, raw)?;
    let bad = || ArgError::NotInteger { name: name.into() };
    if s == "0" {
        return Ok(0);
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    // The server refuses 21 bytes or more (LONG_STR_SIZE) before looking.
    let first_ok = matches!(digits.as_bytes().first(), Some(b'1'..=b'9'));
    if s.len() > 20 || !first_ok || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    s.parse::<i64>().map_err(|_| bad())
}

/// Parses a non-negative decimal with at most three fractional digits into
/// thousandths (so `"12.5"` is `12500`), exactly, without going through f64.
/// `bad` is the error for anything else.
fn parse_milli(raw: &[u8], bad: impl Fn() -> ArgError) -> Result<i64, ArgError> {
    let s = std::str::from_utf8(raw).map_err(|_| bad())?;
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    let digits_ok = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits_ok(int) || !digits_ok(frac) || frac.len() > 3 {
        return Err(bad());
    }
    if s.contains('.') && frac.is_empty() {
        return Err(bad());
    }
    let whole: i64 = int.parse().map_err(|_| bad())?;
    let mut milli: i64 = 0;
    for (i, b) in frac.bytes().enumerate() {
        milli += i64::from(b - b'0') * [100, 10, 1][i];
    }
    whole
        .checked_mul(1000)
        .and_then(|w| w.checked_add(milli))
        .ok_or_else(bad)
}

/// Parses a unix time in seconds (`1700000000` or `1700000000.123`, at most
/// three decimals, no sign, no exponent) into milliseconds, exactly.
///
/// Range: 0 ..= [`MAX_TIME_MS`]. Error: [`ArgError::NotTime`].
pub fn parse_time_ms(name: &str, raw: &[u8]) -> Result<i64, ArgError> {
    let bad = || ArgError::NotTime { name: name.into() };
    let ms = parse_milli(raw, bad)?;
    if ms > MAX_TIME_MS {
        return Err(bad());
    }
    Ok(ms)
}

/// Parses a duration: seconds with up to three decimals, optionally followed by
/// one unit suffix `s`, `m`, `h` or `d` (`90`, `15m`, `72h`, `1.5d`), into
/// milliseconds. Must be greater than 0 and at most 100 years. Error:
/// [`ArgError::NotDuration`].
pub fn parse_duration_ms(name: &str, raw: &[u8]) -> Result<i64, ArgError> {
    let bad = || ArgError::NotDuration { name: name.into() };
    let (num, mult) = match raw.last() {
        Some(b's') => (&raw[..raw.len() - 1], 1),
        Some(b'm') => (&raw[..raw.len() - 1], 60),
        Some(b'h') => (&raw[..raw.len() - 1], 3600),
        Some(b'd') => (&raw[..raw.len() - 1], 86_400),
        _ => (raw, 1),
    };
    let ms = parse_milli(num, bad)?;
    let total = ms
        .checked_mul(mult)
        .filter(|v| *v > 0 && *v <= 100 * 365 * 86_400_000);
    total.ok_or_else(bad)
}

/// Parses a positive count (1 ..= max). Error: [`ArgError::NotCount`].
pub fn parse_count(name: &str, raw: &[u8], max: i64) -> Result<i64, ArgError> {
    match parse_i64(name, raw) {
        Ok(v) if (1..=max).contains(&v) => Ok(v),
        _ => Err(ArgError::NotCount {
            name: name.into(),
            max,
        }),
    }
}

/// Parses a finite float (as Rust's `f64::from_str`; NaN and infinities are
/// refused). Errors: [`ArgError::NotNumber`], [`ArgError::NotFinite`].
pub fn parse_finite_f64(name: &str, raw: &[u8]) -> Result<f64, ArgError> {
    let s = text(name, raw)?;
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && s.trim() == s => Ok(v),
        _ => Err(ArgError::NotFinite { name: name.into() }),
    }
}

/// Formats milliseconds since the epoch as unix seconds with the fewest
/// decimals that keep it exact (`1700000000`, `1700000000.5`).
pub fn format_time_ms(ms: i64) -> String {
    String::from_utf8_lossy(time_text(ms).as_bytes()).into_owned()
}

/// [`format_time_ms`] on the stack (no allocation): the `AT` text of a
/// replicated write. At most 25 bytes (20 digits and a sign, a point, 3
/// decimals).
pub fn time_text(ms: i64) -> StackText<32> {
    let (s, m) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let mut t = StackText::<32>::default();
    t.push(IntText::new(s).as_bytes());
    if m != 0 {
        let digits = [
            b'0' + (m / 100) as u8,
            b'0' + (m / 10 % 10) as u8,
            b'0' + (m % 10) as u8,
        ];
        let keep = if m % 100 == 0 {
            1
        } else if m % 10 == 0 {
            2
        } else {
            3
        };
        t.push(b".");
        t.push(&digits[..keep]);
    }
    t
}

/// Formats a score so that it parses back to the same f64 (shortest round-trip form).
pub fn format_score(v: f64) -> String {
    String::from_utf8_lossy(ScoreText::new(v).as_bytes()).into_owned()
}

/// A score as text, on the stack: the shortest round-trip decimal form
/// (`12.5`) when it takes at most 24 characters, else the shortest
/// exponent form (`1.2345e-300`, at most 24 characters too). Both parse
/// back (Rust, strtod, Redis) to the same f64.
pub struct ScoreText {
    buf: [u8; 32],
    len: usize,
}

impl std::fmt::Write for ScoreText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > 24 {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl ScoreText {
    /// The text of `v`: the same bytes as `format!("{v}")` when that takes
    /// at most 24 characters, else as `format!("{v:e}")`, built by
    /// [`crate::shortest`] (no formatter machinery, no allocation).
    pub fn new(v: f64) -> ScoreText {
        let mut t = ScoreText {
            buf: [0; 32],
            len: 0,
        };
        if v == 0.0 || !v.is_finite() {
            return Self::new_fmt(v);
        }
        // Below 1e-23 or from 1e24 up the decimal form is always longer than
        // 24 characters: skip straight to the exponent form.
        let a = v.abs();
        let long = !(1e-23..1e24).contains(&a);
        let n = if long {
            None
        } else {
            crate::shortest::write_display(v, &mut t.buf[..24])
        };
        // The exponent form of any f64 fits: "-1.2345678901234567e-308".
        t.len = n
            .or_else(|| crate::shortest::write_exp(v, &mut t.buf))
            .unwrap_or(0);
        t
    }

    /// [`ScoreText::new`] through `core::fmt` (zero, infinities and NaN,
    /// and the reference the tests compare with).
    pub fn new_fmt(v: f64) -> ScoreText {
        use std::fmt::Write;
        let mut t = ScoreText {
            buf: [0; 32],
            len: 0,
        };
        if write!(t, "{v}").is_err() || (v != 0.0 && !(1e-23..1e24).contains(&v.abs())) {
            t.len = 0;
            let _ = write!(t, "{v:e}");
        }
        t
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Two decimal digits of each number 0..=99, for [`itoa`].
const DIGITS2: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Converts `n` to decimal at the end of `buf`, returning the start of the
/// text: two digits a step (a table lookup), so a 13-digit unix-ms time
/// takes 7 steps. i64::MIN has 19 digits, so there is room for the sign.
fn itoa(n: i64, buf: &mut [u8; 20]) -> usize {
    let mut i = buf.len();
    let mut v = n.unsigned_abs();
    while v >= 100 {
        let r = 2 * (v % 100) as usize;
        v /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS2[r..r + 2]);
    }
    if v >= 10 {
        let r = 2 * v as usize;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS2[r..r + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
    if n < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    i
}

/// An i64 in decimal, on the stack (no allocation on the hot paths);
/// the same text as `i64::to_string`.
pub struct IntText {
    buf: [u8; 20],
    start: usize,
}

impl IntText {
    pub fn new(n: i64) -> IntText {
        let mut buf = [0u8; 20];
        let start = itoa(n, &mut buf);
        IntText { buf, start }
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Text built on the stack, at most `N` bytes: names and values written on
/// the hot paths without allocating.
#[derive(Clone, Copy)]
pub struct StackText<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Default for StackText<N> {
    fn default() -> Self {
        StackText {
            buf: [0; N],
            len: 0,
        }
    }
}

impl<const N: usize> StackText<N> {
    /// Appends `bytes`; returns false, appending nothing, when they do not
    /// fit (the callers' texts have a known maximum length below `N`).
    pub fn push(&mut self, bytes: &[u8]) -> bool {
        let end = self.len + bytes.len();
        if end > N {
            return false;
        }
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
        true
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// What a pure parse gave for the last [`Recent::CAP`] texts it was given,
/// most recent first: a text met again is compared (memcmp), not parsed.
/// Exact and never stale, since the result depends only on the bytes.
pub struct Recent<T>(Vec<(Vec<u8>, T)>);

impl<T: Copy> Default for Recent<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Recent<T> {
    /// Texts kept.
    pub const CAP: usize = 8;

    pub const fn new() -> Self {
        Recent(Vec::new())
    }

    /// `parse(text)`, from the kept result when `text` was parsed lately.
    /// A text that does not parse (`None`) is not kept.
    pub fn parse(&mut self, text: &[u8], parse: impl FnOnce(&[u8]) -> Option<T>) -> Option<T> {
        if let Some(i) = self.0.iter().position(|(t, _)| t.as_slice() == text) {
            let hit = self.0[i].1;
            if i > 0 {
                let e = self.0.remove(i);
                self.0.insert(0, e);
            }
            return Some(hit);
        }
        let v = parse(text)?;
        self.0.insert(0, (text.to_vec(), v));
        self.0.truncate(Self::CAP);
        Some(v)
    }
}

/// Up to three i64s in decimal joined by `:` (`900:1932:17`), on the
/// stack: the numeric parts of derived key names.
pub struct IntsText {
    buf: [u8; 64],
    len: usize,
}

impl IntsText {
    /// Joins `ns` (at most 3: more are ignored) with `:`.
    pub fn new(ns: &[i64]) -> IntsText {
        let mut t = IntsText {
            buf: [0; 64],
            len: 0,
        };
        for (i, n) in ns.iter().take(3).enumerate() {
            if i > 0 {
                t.buf[t.len] = b':';
                t.len += 1;
            }
            let d = IntText::new(*n);
            let d = d.as_bytes();
            t.buf[t.len..t.len + d.len()].copy_from_slice(d);
            t.len += d.len();
        }
        t
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Strategy;

    #[test]
    fn ints_text_joins_with_colons() {
        assert_eq!(
            IntsText::new(&[900, -3, i64::MIN]).as_bytes(),
            b"900:-3:-9223372036854775808"
        );
        assert_eq!(IntsText::new(&[7]).as_bytes(), b"7");
        assert_eq!(IntsText::new(&[]).as_bytes(), b"");
    }

    proptest::proptest! {
        #[test]
        fn time_text_round_trips(ms in 0..=MAX_TIME_MS) {
            let text = time_text(ms);
            proptest::prop_assert_eq!(parse_time_ms("AT", text.as_bytes()).unwrap(), ms);
            let old = if ms % 1000 == 0 {
                (ms / 1000).to_string()
            } else {
                format!("{}.{}", ms / 1000, format!("{:03}", ms % 1000).trim_end_matches('0'))
            };
            proptest::prop_assert_eq!(text.as_bytes(), old.as_bytes());
        }
    }

    proptest::proptest! {
        #[test]
        fn fast_i64_agrees_with_the_checked_parse(
            raw in proptest::prelude::prop_oneof![
                proptest::prelude::any::<i64>().prop_map(|n| n.to_string().into_bytes()),
                "-?[0-9]{0,21}".prop_map(String::into_bytes),
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..22),
            ]
        ) {
            let checked = parse_i64_checked("x", &raw).ok();
            proptest::prop_assert_eq!(fast_i64(&raw), checked);
        }

        #[test]
        fn int_text_matches_to_string(n in proptest::prelude::any::<i64>()) {
            let (text, want) = (IntText::new(n), n.to_string());
            proptest::prop_assert_eq!(text.as_bytes(), want.as_bytes());
        }
    }

    proptest::proptest! {
        #[test]
        fn score_text_round_trips_and_matches_the_old_rule(bits in proptest::prelude::any::<u64>()) {
            let v = f64::from_bits(bits);
            proptest::prop_assume!(v.is_finite());
            let text = format_score(v);
            proptest::prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), v.to_bits());
            let plain = format!("{v}");
            let want = if plain.len() <= 24 { plain } else { format!("{v:e}") };
            proptest::prop_assert_eq!(text, want);
        }
    }

    proptest::proptest! {
        #[test]
        fn score_text_near_the_length_limits(e in -30i32..30, m in 1.0f64..10.0, neg: bool) {
            let v = if neg { -m } else { m } * 10f64.powi(e);
            let plain = format!("{v}");
            let want = if plain.len() <= 24 { plain } else { format!("{v:e}") };
            proptest::prop_assert_eq!(format_score(v), want);
        }
    }

    #[test]
    fn int_text_edges() {
        for n in [0, 1, -1, 9, 10, i64::MAX, i64::MIN] {
            assert_eq!(IntText::new(n).as_bytes(), n.to_string().as_bytes());
        }
    }

    #[test]
    fn time_parses_exactly_with_up_to_three_decimals() {
        assert_eq!(parse_time_ms("AT", b"807235200"), Ok(807_235_200_000));
        assert_eq!(parse_time_ms("AT", b"807235200.5"), Ok(807_235_200_500));
        assert_eq!(parse_time_ms("AT", b"807235200.123"), Ok(807_235_200_123));
        assert_eq!(parse_time_ms("AT", b"0.001"), Ok(1));
        assert_eq!(parse_time_ms("AT", b"253402300799.999"), Ok(MAX_TIME_MS));
    }

    #[test]
    fn bad_times_are_refused_naming_the_argument() {
        for bad in [
            &b""[..],
            b"-1",
            b"1.2345",
            b"1e9",
            b"nan",
            b"inf",
            b"1.",
            b".5",
            b" 1",
            b"+1",
            b"253402300800",
            b"99999999999999999999",
            b"\xff",
        ] {
            let e = parse_time_ms("AT", bad).unwrap_err();
            assert_eq!(e, ArgError::NotTime { name: "AT".into() });
            assert!(e.to_string().starts_with("AT must be unix seconds"));
        }
    }

    #[test]
    fn durations_take_unit_suffixes() {
        assert_eq!(parse_duration_ms("WINDOW", b"72h"), Ok(72 * 3_600_000));
        assert_eq!(parse_duration_ms("WINDOW", b"90"), Ok(90_000));
        assert_eq!(parse_duration_ms("WINDOW", b"15m"), Ok(900_000));
        assert_eq!(parse_duration_ms("WINDOW", b"1.5d"), Ok(129_600_000));
        assert_eq!(parse_duration_ms("WINDOW", b"10s"), Ok(10_000));
        assert!(parse_duration_ms("WINDOW", b"0").is_err());
        assert!(parse_duration_ms("WINDOW", b"h").is_err());
        assert!(parse_duration_ms("WINDOW", b"-1h").is_err());
        assert!(parse_duration_ms("WINDOW", b"99999999999d").is_err());
    }

    /// The server's `string2ll` (util.c, Redis 7.0), transcribed step by
    /// step: the reference [`parse_i64`] must agree with.
    fn string2ll(p: &[u8]) -> Option<i64> {
        if p.is_empty() || p.len() >= 21 {
            return None;
        }
        if p == b"0" {
            return Some(0);
        }
        let (neg, rest) = match p.split_first() {
            Some((b'-', r)) if !r.is_empty() => (true, r),
            Some((b'-', _)) => return None,
            _ => (false, p),
        };
        let (first, tail) = rest.split_first()?;
        if !(b'1'..=b'9').contains(first) {
            return None;
        }
        let mut v = u64::from(first - b'0');
        for &d in tail {
            if !d.is_ascii_digit() {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        if neg {
            if v > (i64::MAX as u64) + 1 {
                return None;
            }
            Some((v as i64).wrapping_neg())
        } else {
            i64::try_from(v).ok()
        }
    }

    #[test]
    fn integers_follow_the_server_rule() {
        let corpus: [&[u8]; 22] = [
            b"05",
            b"00",
            b"007",
            b"-0",
            b"-05",
            b"+5",
            b" 5",
            b"5 ",
            b"",
            b"-",
            b"12345678901234567890",
            b"9223372036854775807",
            b"-9223372036854775808",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"1e3",
            b"0x10",
            b"5\x00",
            b"0",
            b"-1",
            b"10",
            b"000000000000000000001",
        ];
        for raw in corpus {
            assert_eq!(
                parse_i64("value", raw).ok(),
                string2ll(raw),
                "{}",
                raw.escape_ascii()
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn integers_agree_with_string2ll(raw in proptest::collection::vec(
            proptest::sample::select(b"-+0123456789 .ex\x00".to_vec()), 0..23)) {
            proptest::prop_assert_eq!(parse_i64("value", &raw).ok(), string2ll(&raw));
        }
    }

    #[test]
    fn integers_refuse_overflow_and_junk() {
        assert_eq!(parse_i64("delta", b"-42"), Ok(-42));
        assert_eq!(parse_i64("delta", b"9223372036854775807"), Ok(i64::MAX));
        for bad in [
            &b"9223372036854775808"[..],
            b"1.0",
            b"",
            b"-",
            b"+1",
            b"1e3",
            b"nan",
        ] {
            let e = parse_i64("delta", bad).unwrap_err();
            assert_eq!(
                e,
                ArgError::NotInteger {
                    name: "delta".into()
                }
            );
            assert_eq!(e.to_string(), "delta is not an integer or out of range");
        }
    }

    #[test]
    fn floats_must_be_finite() {
        assert_eq!(parse_finite_f64("gamma", b"1.5"), Ok(1.5));
        for bad in [&b"nan"[..], b"inf", b"-inf", b"1e400", b"", b" 1"] {
            assert!(parse_finite_f64("gamma", bad).is_err());
        }
    }

    #[test]
    fn formatted_times_and_scores_round_trip() {
        assert_eq!(format_time_ms(807_235_200_000), "807235200");
        assert_eq!(format_time_ms(807_235_200_500), "807235200.5");
        assert_eq!(format_time_ms(807_235_200_012), "807235200.012");
        assert_eq!(format_time_ms(807_235_200_120), "807235200.12");
        assert_eq!(format_time_ms(0), "0");
        assert_eq!(format_time_ms(1), "0.001");
        for v in [
            0.1,
            1.0 / 3.0,
            1e-300,
            2.2250738585072014e-308,
            1e300,
            123456.789,
        ] {
            assert_eq!(format_score(v).parse::<f64>(), Ok(v));
        }
    }
}
