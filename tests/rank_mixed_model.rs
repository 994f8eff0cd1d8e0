//! A reference model of RANK boards of every kind, checked against the
//! server over 100,000 random operations: ascending and descending boards,
//! small and default score ranges, RANK.SET with GT/LT/BEST, day/week/month
//! period boards in several time zones and KEEP values, event times (`AT`)
//! spread over 70 days, RANK.MINCR, RANK.REM, RANK.DROP and re-creation.
//!
//! Every reply is compared with the model's, and the full order of every
//! board (all-time and every live period board) is compared every 500
//! operations and at the end.
//!
//! The model is written from the README's rules: best first (the higher
//! score on a desc board, the lower on an asc one), ties to the earlier
//! time reached, then the member name; a write decides every board before
//! writing any (a score out of range anywhere writes nothing); INCR adds to
//! each period board (a member new to a period starts at 0); SET and its
//! GT/LT/BEST apply to each board separately, and the `[score, written]`
//! reply is the all-time board's; an equal score is never rewritten; the
//! event time picks the period; a period board lives until `KEEP` periods
//! after its period ends and is not written once expired; REM leaves period
//! boards alone. Period arithmetic (ISO weeks, months, time zones) comes from
//! `hotrank::rank::period`, whose boundaries tests/rank_period.rs checks
//! against fixed dates: here the point is the commands.
//!
//! `RANK_MODEL_SEED` replays a seed; `RANK_MODEL_OPS` changes the count.
mod common;

use common::rng::Rng;
use common::Server;
use hotrank::rank::period::{Period, Span, Tz};
use redis::{Connection, Value};
use std::collections::{BTreeMap, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};

const DAY_MS: i64 = 86_400_000;
const TZS: [i32; 6] = [-14 * 60, -5 * 60 - 30, 0, 5 * 60 + 45, 9 * 60, 14 * 60];
const MEMBERS: usize = 40;

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis() as i64
}

/// One member's place: score and the second it was reached.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    score: i64,
    sec: i64,
}

type Members = BTreeMap<String, Entry>;

#[derive(Clone, Debug)]
struct Config {
    asc: bool,
    range: Option<(i64, i64)>,
    periods: Vec<Period>,
    tz: i32,
    keep: i64,
}

impl Config {
    fn random(rng: &mut Rng) -> Config {
        let mut periods = Vec::new();
        if rng.chance(0.7) {
            for p in Period::ALL {
                if rng.chance(0.6) {
                    periods.push(p);
                }
            }
            if periods.is_empty() {
                periods.push(*rng.pick(&Period::ALL));
            }
        }
        Config {
            asc: rng.chance(0.5),
            range: rng.chance(0.5).then_some((-500, 500)),
            periods,
            tz: *rng.pick(&TZS),
            keep: *rng.pick(&[0, 1, 2, 40]),
        }
    }

    fn tz(&self) -> Tz {
        Tz::from_minutes(self.tz).expect("a valid offset")
    }

    fn bounds(&self) -> (i64, i64) {
        self.range.unwrap_or((-(1 << 30), (1 << 30) - 1))
    }

    fn create_args(&self, key: &str) -> Vec<String> {
        let mut a = vec!["RANK.CREATE".to_string(), key.to_string()];
        if let Some((lo, hi)) = self.range {
            a.extend(["MIN".into(), lo.to_string(), "MAX".into(), hi.to_string()]);
        }
        a.extend(["ORDER".into(), if self.asc { "asc" } else { "desc" }.into()]);
        if !self.periods.is_empty() {
            a.push("PERIODS".into());
            a.extend(self.periods.iter().map(|p| p.name().to_string()));
            let (sign, m) = if self.tz < 0 {
                ('-', -self.tz)
            } else {
                ('+', self.tz)
            };
            a.extend(["TZ".into(), format!("{sign}{:02}:{:02}", m / 60, m % 60)]);
            a.extend(["KEEP".into(), self.keep.to_string()]);
        }
        a
    }

    /// Expiry (unix ms) of a period board: KEEP periods after its end.
    fn expiry(&self, s: Span) -> i64 {
        s.plus(1 + self.keep).start_ms(self.tz())
    }
}

/// A board in the model: its config, the all-time members and the period boards.
struct Board {
    key: String,
    cfg: Config,
    all: Members,
    periods: HashMap<Span, Members>,
}

impl Board {
    /// Best first.
    fn sorted(&self, m: &Members) -> Vec<(String, Entry)> {
        let mut v: Vec<(String, Entry)> = m.iter().map(|(k, e)| (k.clone(), *e)).collect();
        let asc = self.cfg.asc;
        v.sort_by(|(ka, a), (kb, b)| {
            let by_score = if asc {
                a.score.cmp(&b.score)
            } else {
                b.score.cmp(&a.score)
            };
            by_score
                .then(a.sec.cmp(&b.sec))
                .then(ka.as_bytes().cmp(kb.as_bytes()))
        });
        v
    }

    fn better(&self, a: i64, b: i64) -> bool {
        if self.cfg.asc {
            a < b
        } else {
            a > b
        }
    }

    /// Drops the period boards that have expired at `now`.
    fn prune(&mut self, now: i64) {
        let cfg = self.cfg.clone();
        self.periods.retain(|s, _| cfg.expiry(*s) > now);
    }

    /// The live period boards a write at `t` lands in, at `now`.
    fn spans_at(&self, t: i64, now: i64) -> Vec<Span> {
        self.cfg
            .periods
            .iter()
            .map(|p| p.containing(t, self.cfg.tz()))
            .filter(|s| self.cfg.expiry(*s) > now)
            .collect()
    }

    fn members(&self, sel: Option<Span>) -> Members {
        match sel {
            None => self.all.clone(),
            Some(s) => self.periods.get(&s).cloned().unwrap_or_default(),
        }
    }
}

/// A reply in a comparable text form: `ERR` for any error.
fn show(r: redis::RedisResult<Value>) -> String {
    fn v(x: &Value) -> String {
        match x {
            Value::Nil => "nil".into(),
            Value::Int(i) => i.to_string(),
            Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            Value::SimpleString(s) => s.clone(),
            Value::Okay => "OK".into(),
            Value::Array(a) => format!("[{}]", a.iter().map(v).collect::<Vec<_>>().join(",")),
            other => format!("{other:?}"),
        }
    }
    match r {
        Ok(x) => v(&x),
        Err(_) => "ERR".into(),
    }
}

fn arr(items: Vec<String>) -> String {
    format!("[{}]", items.join(","))
}

struct World {
    rng: Rng,
    boards: Vec<Board>,
}

impl World {
    fn member(&mut self) -> String {
        format!("m{:02}", self.rng.below(MEMBERS as u64))
    }

    /// An event time (ms, whole seconds) within the last 70 days.
    fn event_ms(&mut self, now: i64) -> i64 {
        (now - self.rng.range(0, 70 * DAY_MS)) / 1000 * 1000
    }

    /// A period selector for a read: `None` (all-time) or (period, AGO n).
    fn selector(&mut self, b: usize) -> Option<(Period, i64)> {
        let cfg = &self.boards[b].cfg;
        if cfg.periods.is_empty() || self.rng.chance(0.4) {
            // Sometimes a period the board lacks: an error.
            if self.rng.chance(0.03) {
                return Some((*self.rng.pick(&Period::ALL), 0));
            }
            return None;
        }
        let p = *self.rng.pick(&cfg.periods.clone());
        let n = self.rng.range(0, cfg.keep.min(3) + 1);
        Some((p, n))
    }
}

/// The span a read selects at `now`; `Err` when the board lacks the period.
fn span_of(b: &Board, sel: Option<(Period, i64)>, now: i64) -> Result<Option<Span>, ()> {
    match sel {
        None => Ok(None),
        Some((p, n)) if b.cfg.periods.contains(&p) => {
            Ok(Some(p.containing(now, b.cfg.tz()).ago(n)))
        }
        Some(_) => Err(()),
    }
}

fn sel_args(sel: Option<(Period, i64)>) -> Vec<String> {
    match sel {
        None => vec![],
        Some((p, n)) => vec![
            "PERIOD".into(),
            p.name().into(),
            "AGO".into(),
            n.to_string(),
        ],
    }
}

fn run(c: &mut Connection, args: &[String]) -> String {
    let mut cmd = redis::cmd(&args[0]);
    for a in &args[1..] {
        cmd.arg(a);
    }
    show(cmd.query(c))
}

/// Waits while any board's local midnight is less than 3 s away, so no
/// operation straddles a period boundary of the server clock.
fn away_from_midnight() {
    loop {
        let now = wall_ms();
        let close = TZS.iter().any(|tz| {
            let local = (now + *tz as i64 * 60_000).rem_euclid(DAY_MS);
            !(1_000..=DAY_MS - 3_000).contains(&local)
        });
        if !close {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// The model's reply to a write of `new_score(old)` for `member` on every
/// board the event lands in; `cond(old, new)` says whether to write.
/// Returns the per-board outcome or `Err` when a score is out of range.
#[allow(clippy::type_complexity)]
fn plan_write(
    b: &Board,
    member: &str,
    spans: &[Span],
    new_score: &dyn Fn(Option<i64>) -> Option<i64>,
    cond: &dyn Fn(Option<i64>, i64) -> bool,
) -> Result<Vec<(Option<Span>, i64, bool)>, ()> {
    let (lo, hi) = b.cfg.bounds();
    let mut out = Vec::new();
    let boards: Vec<Option<Span>> = std::iter::once(None)
        .chain(spans.iter().map(|s| Some(*s)))
        .collect();
    for sel in boards {
        let m = b.members(sel);
        let old = m.get(member).map(|e| e.score);
        let new = new_score(old).ok_or(())?;
        if new < lo || new > hi {
            return Err(());
        }
        let write = cond(old, new) && old != Some(new);
        out.push((sel, if write { new } else { old.unwrap_or(new) }, write));
    }
    Ok(out)
}

fn apply(b: &mut Board, member: &str, plan: &[(Option<Span>, i64, bool)], sec: i64) {
    for (sel, score, write) in plan {
        if !write {
            continue;
        }
        let m = match sel {
            None => &mut b.all,
            Some(s) => b.periods.entry(*s).or_default(),
        };
        m.insert(member.to_string(), Entry { score: *score, sec });
    }
}

fn step(w: &mut World, c: &mut Connection, i: usize) {
    away_from_midnight();
    let now = wall_ms();
    let bi = w.rng.below(w.boards.len() as u64) as usize;
    w.boards[bi].prune(now);
    let key = w.boards[bi].key.clone();
    let roll = w.rng.below(100);
    let (args, want): (Vec<String>, String) = match roll {
        // RANK.INCR
        0..=24 => {
            let m = w.member();
            let delta = w.rng.range(-60, 60);
            let t = w.event_ms(now);
            let b = &w.boards[bi];
            let spans = b.spans_at(t, now);
            let plan = plan_write(
                b,
                &m,
                &spans,
                &|old| old.unwrap_or(0).checked_add(delta),
                &|_, _| true,
            );
            let args = vec![
                "RANK.INCR".into(),
                key.clone(),
                m.clone(),
                delta.to_string(),
                "AT".into(),
                (t / 1000).to_string(),
            ];
            let want = match plan {
                Err(()) => "ERR".to_string(),
                Ok(p) => {
                    let reply = p[0].1;
                    apply(&mut w.boards[bi], &m, &p, t / 1000);
                    reply.to_string()
                }
            };
            (args, want)
        }
        // RANK.SET [GT|LT|BEST]
        25..=44 => {
            let m = w.member();
            let (lo, hi) = w.boards[bi].cfg.bounds();
            let score = if w.rng.chance(0.05) {
                hi + 1
            } else {
                w.rng.range(lo.max(-600), hi.min(600))
            };
            let t = w.event_ms(now);
            let opt = *w.rng.pick(&["", "GT", "LT", "BEST"]);
            let b = &w.boards[bi];
            let gt = match opt {
                "GT" => Some(true),
                "LT" => Some(false),
                "BEST" => Some(!b.cfg.asc),
                _ => None,
            };
            let spans = b.spans_at(t, now);
            let cond = move |old: Option<i64>, new: i64| match (gt, old) {
                (_, None) | (None, _) => true,
                (Some(true), Some(o)) => new > o,
                (Some(false), Some(o)) => new < o,
            };
            let plan = plan_write(b, &m, &spans, &|_| Some(score), &cond);
            let mut args = vec!["RANK.SET".into(), key.clone(), m.clone(), score.to_string()];
            if !opt.is_empty() {
                args.push(opt.into());
            }
            args.extend(["AT".into(), (t / 1000).to_string()]);
            let want = match plan {
                Err(()) => "ERR".to_string(),
                Ok(p) => {
                    let (_, after, written) = p[0];
                    apply(&mut w.boards[bi], &m, &p, t / 1000);
                    if gt.is_some() {
                        arr(vec![after.to_string(), i64::from(written).to_string()])
                    } else {
                        score.to_string()
                    }
                }
            };
            (args, want)
        }
        // RANK.MINCR (server clock): the time is read back.
        45..=49 => return mincr(w, c, bi, now),
        // RANK.REM (all-time board only).
        50..=52 => {
            let m = w.member();
            let removed = w.boards[bi].all.remove(&m).is_some();
            (
                vec!["RANK.REM".into(), key.clone(), m],
                i64::from(removed).to_string(),
            )
        }
        // RANK.DROP, then the board is created again with a new config.
        53 if i.is_multiple_of(7) => {
            let b = &w.boards[bi];
            let n = 1
                + usize::from(!b.all.is_empty())
                + b.periods.values().filter(|m| !m.is_empty()).count();
            let got = run(c, &["RANK.DROP".into(), key.clone()]);
            assert_eq!(got, n.to_string(), "op {i}: RANK.DROP {key}");
            let cfg = Config::random(&mut w.rng);
            let got = run(c, &cfg.create_args(&key));
            assert_eq!(got, "OK", "op {i}: {:?}", cfg.create_args(&key));
            w.boards[bi] = Board {
                key,
                cfg,
                all: Members::new(),
                periods: HashMap::new(),
            };
            return;
        }
        _ => return read(w, c, bi, now, i),
    };
    let got = run(c, &args);
    assert_eq!(got, want, "op {i}: {args:?} on {:?}", w.boards[bi].cfg);
}

fn mincr(w: &mut World, c: &mut Connection, bi: usize, now: i64) {
    let key = w.boards[bi].key.clone();
    let delta = w.rng.range(-30, 30);
    let names: Vec<String> = (0..w.rng.range(1, 4)).map(|_| w.member()).collect();
    let mut args = vec!["RANK.MINCR".to_string(), key.clone(), delta.to_string()];
    args.extend(names.iter().cloned());
    let before = wall_ms();
    let got = run(c, &args);
    let after = wall_ms();
    // The server's clock is within [before, after]; the period is the same
    // at both ends (away_from_midnight), so it is known; the second is read back.
    let b = &w.boards[bi];
    let spans = b.spans_at(now, now);
    assert!(spans.iter().all(|s| b.spans_at(after, after).contains(s)));
    // Plan every member on a scratch copy (a member named twice gets delta twice).
    let mut scratch = Board {
        key: key.clone(),
        cfg: b.cfg.clone(),
        all: b.all.clone(),
        periods: b.periods.clone(),
    };
    let mut replies = Vec::new();
    let mut failed = false;
    for m in &names {
        match plan_write(
            &scratch,
            m,
            &spans,
            &|old| old.unwrap_or(0).checked_add(delta),
            &|_, _| true,
        ) {
            Err(()) => failed = true,
            Ok(p) => {
                replies.push(p[0].1.to_string());
                apply(&mut scratch, m, &p, -1);
            }
        }
    }
    if failed {
        assert_eq!(got, "ERR", "{args:?}");
        return;
    }
    assert_eq!(got, arr(replies), "{args:?}");
    // The second every written entry was reached: the server's, read back
    // from one written member, and within the call.
    let mut sec = None;
    for m in &names {
        if scratch.all.get(m).is_some_and(|e| e.sec == -1) {
            let r = run(
                c,
                &[
                    "RANK.SCORE".into(),
                    key.clone(),
                    m.clone(),
                    "WITHTIME".into(),
                ],
            );
            let t: i64 = r
                .trim_matches(['[', ']'])
                .split(',')
                .nth(1)
                .expect("a time")
                .parse()
                .expect("seconds");
            assert!(
                (before / 1000..=after / 1000).contains(&t),
                "{t} not in the call"
            );
            sec = Some(t);
            break;
        }
    }
    let sec = sec.unwrap_or(before / 1000);
    for m in scratch
        .all
        .values_mut()
        .chain(scratch.periods.values_mut().flat_map(|p| p.values_mut()))
    {
        if m.sec == -1 {
            m.sec = sec;
        }
    }
    w.boards[bi].all = scratch.all;
    w.boards[bi].periods = scratch.periods;
}

fn read(w: &mut World, c: &mut Connection, bi: usize, now: i64, i: usize) {
    let sel = w.selector(bi);
    let m = w.member();
    let which = w.rng.below(7);
    let b = &w.boards[bi];
    let key = b.key.clone();
    let span = span_of(b, sel, now);
    let sorted = match span {
        Ok(s) => Some(b.sorted(&b.members(s))),
        Err(()) => None,
    };
    let rank_of = |v: &Vec<(String, Entry)>| v.iter().position(|(k, _)| *k == m);
    let (mut args, want): (Vec<String>, String) = match which {
        0 => {
            let withtime = w.rng.chance(0.5);
            let mut a = vec!["RANK.SCORE".into(), key, m.clone()];
            if withtime {
                a.push("WITHTIME".into());
            }
            let want = sorted.map_or("ERR".into(), |v| match v.iter().find(|(k, _)| *k == m) {
                None => "nil".into(),
                Some((_, e)) if withtime => arr(vec![e.score.to_string(), e.sec.to_string()]),
                Some((_, e)) => e.score.to_string(),
            });
            (a, want)
        }
        1 => {
            let ties = w.rng.chance(0.5);
            let mut a = vec!["RANK.RANK".into(), key, m.clone()];
            if ties {
                a.push("TIES".into());
            }
            let want = sorted.map_or("ERR".into(), |v| match rank_of(&v) {
                None => "nil".into(),
                Some(r) if ties => {
                    let s = v[r].1.score;
                    v.iter()
                        .filter(|(_, e)| b.better(e.score, s))
                        .count()
                        .to_string()
                }
                Some(r) => r.to_string(),
            });
            (a, want)
        }
        2 => {
            let (start, stop) = (w.rng.range(-8, 12), w.rng.range(-8, 40));
            let a = vec![
                "RANK.RANGE".into(),
                key,
                start.to_string(),
                stop.to_string(),
                "WITHSCORES".into(),
            ];
            let want = sorted.map_or("ERR".into(), |v| {
                // ZRANGE's index rules.
                let n = v.len() as i64;
                let s = if start < 0 { (n + start).max(0) } else { start };
                let e = if stop < 0 { n + stop } else { stop.min(n - 1) };
                let mut out = Vec::new();
                if s <= e && s < n {
                    for (k, en) in &v[s as usize..=e as usize] {
                        out.extend([k.clone(), en.score.to_string()]);
                    }
                }
                arr(out)
            });
            (a, want)
        }
        3 => {
            let n = w.rng.range(0, 3);
            let a = vec!["RANK.AROUND".into(), key, m.clone(), n.to_string()];
            let want = sorted.map_or("ERR".into(), |v| match rank_of(&v) {
                None => "[]".into(),
                Some(r) => {
                    let first = r.saturating_sub(n as usize);
                    let last = (r + n as usize).min(v.len() - 1);
                    arr((first..=last)
                        .map(|j| {
                            arr(vec![
                                j.to_string(),
                                v[j].0.clone(),
                                v[j].1.score.to_string(),
                            ])
                        })
                        .collect())
                }
            });
            (a, want)
        }
        4 => {
            let (x, y) = (w.rng.range(-200, 200), w.rng.range(-200, 200));
            let (lo, hi) = (x.min(y), x.max(y));
            let limit = w
                .rng
                .chance(0.4)
                .then(|| (w.rng.range(0, 3), w.rng.range(1, 5)));
            let mut a = vec![
                "RANK.RANGEBYSCORE".into(),
                key,
                lo.to_string(),
                hi.to_string(),
            ];
            if let Some((off, cnt)) = limit {
                a.extend(["LIMIT".into(), off.to_string(), cnt.to_string()]);
            }
            a.push("WITHSCORES".into());
            let want = sorted.map_or("ERR".into(), |v| {
                let hits = v.iter().filter(|(_, e)| (lo..=hi).contains(&e.score));
                let (off, cnt) = limit.unwrap_or((0, i64::MAX));
                let mut out = Vec::new();
                for (k, e) in hits.skip(off as usize).take(cnt as usize) {
                    out.extend([k.clone(), e.score.to_string()]);
                }
                arr(out)
            });
            (a, want)
        }
        _ => {
            let a = vec!["RANK.CARD".into(), key];
            let want = sorted.map_or("ERR".into(), |v| v.len().to_string());
            (a, want)
        }
    };
    args.extend(sel_args(sel));
    let got = run(c, &args);
    assert_eq!(got, want, "op {i}: {args:?} on {:?}", w.boards[bi].cfg);
}

/// The full order of every board, all-time and every live period board.
fn check_all(w: &mut World, c: &mut Connection, what: &str) {
    away_from_midnight();
    let now = wall_ms();
    for b in w.boards.iter_mut() {
        b.prune(now);
        let mut sels: Vec<Option<(Period, i64)>> = vec![None];
        for s in b.periods.keys() {
            let cur = s.period.containing(now, b.cfg.tz());
            sels.push(Some((s.period, cur.index - s.index)));
        }
        for sel in sels {
            let span = span_of(b, sel, now).expect("a period of the board");
            let want: Vec<String> = b
                .sorted(&b.members(span))
                .into_iter()
                .flat_map(|(k, e)| [k, e.score.to_string()])
                .collect();
            let mut args = vec![
                "RANK.RANGE".to_string(),
                b.key.clone(),
                "0".into(),
                "-1".into(),
                "WITHSCORES".into(),
            ];
            args.extend(sel_args(sel));
            assert_eq!(run(c, &args), arr(want), "{what}: {args:?} on {:?}", b.cfg);
        }
    }
}

#[test]
fn random_operations_on_every_kind_of_board_match_the_model() {
    let seed = std::env::var("RANK_MODEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| wall_ms() as u64);
    let ops: usize = std::env::var("RANK_MODEL_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    println!("seed {seed} (RANK_MODEL_SEED replays it), {ops} operations");
    let s = Server::start();
    let mut c = s.conn();
    let mut w = World {
        rng: Rng::new(seed),
        boards: Vec::new(),
    };
    for i in 0..6 {
        let key = format!("lb:{{m{i}}}");
        let cfg = Config::random(&mut w.rng);
        assert_eq!(
            run(&mut c, &cfg.create_args(&key)),
            "OK",
            "{:?}",
            cfg.create_args(&key)
        );
        w.boards.push(Board {
            key,
            cfg,
            all: Members::new(),
            periods: HashMap::new(),
        });
    }
    for i in 0..ops {
        step(&mut w, &mut c, i);
        if i % 500 == 499 {
            check_all(&mut w, &mut c, &format!("after op {i}"));
        }
    }
    check_all(&mut w, &mut c, "at the end");
    let kinds: Vec<String> = w.boards.iter().map(|b| format!("{:?}", b.cfg)).collect();
    println!("boards at the end: {kinds:#?}");
}
