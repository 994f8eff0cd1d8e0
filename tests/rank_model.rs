//! `RANK.*` against a reference model (split out of tests/rank.rs): ordering
//! and ties over thousands of seeded splitmix64 random operations on every
//! layout, and the bar of 100,000 operations.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
#[path = "common/rank_client.rs"]
mod rank_client;
use rank_client::*;
#[path = "common/rank_reference.rs"]
mod rank_reference;
use common::rng::SplitMix as Rng;
use rank_reference::*;
use redis::Value;

/// Runs `ops` seeded random INCR/SET/REM operations on a board created with
/// `create` (none: created by the first write with the default layout) and
/// checks every reply, the whole range after each operation, sampled ranks,
/// scores and times, and everything every 250 operations and at the end.
fn model_run(seed: u64, create: &[&str], l: Layout, ops: usize) {
    let mut s = Server::start();
    let c = &mut s.conn();
    let k = "lb:{model}";
    if !create.is_empty() {
        let mut args = vec!["RANK.CREATE", k];
        args.extend_from_slice(create);
        assert_eq!(ok(c, &args), Value::Okay);
    }
    let mut rng = Rng(seed);
    let mut model = Model::new(l);
    let mut names: Vec<Vec<u8>> = (0..46).map(|i| format!("m{i:02}").into_bytes()).collect();
    names.extend([
        b"".to_vec(),
        b"m\0x".to_vec(),
        "é".as_bytes().to_vec(),
        b"M 1".to_vec(),
    ]);
    // Values near the middle of the layout (0 when 0 is in range).
    let base = if l.min <= 0 && 0 <= l.max {
        0
    } else {
        l.min + (l.max - l.min) / 2
    };
    let mut t = now_ms() - 20_000_000;
    let started = std::time::Instant::now();
    let (mut errors, mut ties_seen, mut same_time_ties) = (0, 0, 0);
    for op in 0..ops {
        // Time: often the same instant, mostly forwards, sometimes backwards.
        match rng.below(100) {
            0..=34 => {}
            35..=69 => t += rng.range(0, 999),
            _ => t += rng.range(1000, 4000),
        }
        t = t.min(now_ms() - 1000);
        // 0..50 INCR, 50..85 SET, 85..92 REM, 92..100 SET to another
        // member's score at its time (same second or millisecond: a tie).
        let kind = rng.below(100);
        let copy = if kind >= 92 && !model.m.is_empty() {
            let i = rng.below(model.m.len() as u64) as usize;
            model.m.values().nth(i).copied()
        } else {
            None
        };
        let at_ms = match (copy, rng.below(100)) {
            (Some((_, t0)), _) => {
                let within = t0 + rng.below(l.unit_ms as u64) as i64;
                Some(within.min(now_ms() - 1).max(t0))
            }
            (None, 0..=84) => Some(t),
            (None, 85..=91) => Some(t - rng.range(0, 20_000)),
            _ => None,
        };
        let at_s = at_ms.map(|ms| {
            if ms % 1000 == 0 && rng.pct(50) {
                (ms / 1000).to_string()
            } else {
                fmt_ms(ms)
            }
        });
        let member = if rng.pct(50) {
            names[rng.below(8) as usize].clone()
        } else {
            names[rng.below(names.len() as u64) as usize].clone()
        };
        let mut args: Vec<Vec<u8>> = Vec::new();
        #[allow(clippy::needless_late_init)]
        let expected: Result<Value, String>;
        let mut read_back = false;
        if !(85..92).contains(&kind) {
            let incr = kind < 50;
            let v = if let Some((score, _)) = copy {
                score
            } else if incr {
                match rng.below(100) {
                    0..=19 => 0,
                    20..=79 => rng.range(-3, 3),
                    80..=94 => rng.range(-1000, 1000),
                    95..=96 => [i64::MAX, i64::MIN][rng.below(2) as usize],
                    _ => {
                        let cur = model.m.get(&member).map_or(0, |v| v.0);
                        // Land just inside or just outside a bound.
                        let target = [l.min, l.max][rng.below(2) as usize];
                        let target = target.saturating_add(rng.range(-1, 1));
                        target.saturating_sub(cur)
                    }
                }
            } else {
                match rng.below(100) {
                    0..=69 => base + rng.range(-5, 10),
                    70..=89 => {
                        let b = [l.min, l.max][rng.below(2) as usize];
                        b.saturating_add(rng.range(-1, 1))
                    }
                    _ => l.min + rng.below((l.max - l.min) as u64 + 1) as i64,
                }
            };
            args.push(if incr { &b"RANK.INCR"[..] } else { b"RANK.SET" }.to_vec());
            args.push(k.as_bytes().to_vec());
            args.push(member.clone());
            args.push(v.to_string().into_bytes());
            if let Some(a) = &at_s {
                args.push(b"AT".to_vec());
                args.push(a.clone().into_bytes());
            }
            let r = if incr {
                model.incr(&member, v, at_ms)
            } else {
                model.write(&member, Ok(v), at_ms)
            };
            expected = r.map(|(v, rb)| {
                read_back = rb;
                int(v)
            });
        } else {
            let n = rng.range(1, 3) as usize;
            let mut rem: Vec<Vec<u8>> = (0..n)
                .map(|_| names[rng.below(names.len() as u64) as usize].clone())
                .collect();
            if rng.pct(10) {
                rem.push(rem[0].clone());
            }
            args.push(b"RANK.REM".to_vec());
            args.push(k.as_bytes().to_vec());
            args.extend(rem.iter().cloned());
            let refs: Vec<&[u8]> = rem.iter().map(|v| v.as_slice()).collect();
            expected = Ok(int(model.rem(&refs)));
        }
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        let before = now_ms();
        let got = bcmd(&argv).query::<Value>(c).map_err(|e| err_text(&e));
        let after = now_ms();
        let ctx = || format!("seed {seed} op #{op}: {:?}", lossy(&argv));
        assert_eq!(got, expected, "{}", ctx());
        if got.is_err() {
            errors += 1;
        }
        if read_back {
            // Written at the server clock: read the time and adopt it.
            let v = okb(c, &[b"RANK.SCORE", k.as_bytes(), &member, b"WITHTIME"]);
            let Value::Array(v) = v else {
                panic!("{}", ctx())
            };
            let Value::BulkString(ts) = &v[1] else {
                panic!("{}", ctx())
            };
            let ms = parse_ms(&String::from_utf8_lossy(ts));
            assert!(
                model.floor(before) <= ms && ms <= after,
                "{}: time {ms} not in {before}..={after}",
                ctx()
            );
            model.m.get_mut(&member).unwrap().1 = ms;
        }
        // Checks: the whole range, a random range, sampled members.
        let mut p = redis::pipe();
        let mut want = Vec::new();
        p.cmd("RANK.RANGE").arg(k).arg(0).arg(-1).arg("WITHSCORES");
        want.push(model.range_reply(0, -1, true));
        let n = model.m.len() as i64 + 3;
        let (a, b) = (rng.range(-n, n), rng.range(-n, n));
        p.cmd("RANK.RANGE").arg(k).arg(a).arg(b);
        want.push(model.range_reply(a, b, false));
        p.cmd("RANK.CARD").arg(k);
        want.push(int(model.m.len() as i64));
        let mut sample = vec![member.clone()];
        for _ in 0..2 {
            sample.push(names[rng.below(names.len() as u64) as usize].clone());
        }
        for m in &sample {
            model.add_member_checks(&mut p, &mut want, k, m);
        }
        let got: Vec<Value> = p.query(c).expect("check pipeline");
        compare(&got, &want, &ctx());
        if op % 250 == 249 {
            model.check_all(c, k);
        }
        let o = model.order();
        ties_seen += o.windows(2).filter(|w| w[0].1 == w[1].1).count();
        same_time_ties += o
            .windows(2)
            .filter(|w| w[0].1 == w[1].1 && w[0].2 == w[1].2)
            .count();
    }
    model.check_all(c, k);
    // The run exercised what it is meant to.
    assert!(errors > ops / 100, "only {errors} refused writes");
    assert!(ties_seen > ops, "only {ties_seen} ties seen");
    assert!(
        same_time_ties > ops / 2,
        "only {same_time_ties} same-time ties seen"
    );
    eprintln!(
        "seed {seed}: {ops} ops in {:?}, {errors} refused, {} members at the end, {ties_seen} tied pairs and {same_time_ties} tied in the same time unit seen",
        started.elapsed(),
        model.m.len()
    );
    assert_healthy(&mut s, c);
}

#[test]
fn model_default_seconds_board_made_by_first_write() {
    model_run(1, &[], Layout::seconds(S_MIN, S_MAX), 5000);
}

#[test]
fn model_default_millisecond_board() {
    model_run(
        2,
        &["RESOLUTION", "ms"],
        Layout::millis(MS_MIN, MS_MAX),
        5000,
    );
}

#[test]
fn model_narrow_millisecond_board() {
    model_run(
        3,
        &["RESOLUTION", "ms", "MIN", "-20", "MAX", "20"],
        Layout::millis(-20, 20),
        5000,
    );
}

#[test]
fn model_narrow_seconds_board() {
    model_run(4, &["MIN", "-3", "MAX", "8"], Layout::seconds(-3, 8), 3000);
}

#[test]
fn model_wide_board_at_the_top_of_i64() {
    let min = i64::MAX - 4_294_967_295;
    model_run(
        5,
        &["MIN", &min.to_string(), "MAX", &i64::MAX.to_string()],
        Layout::seconds(min, i64::MAX),
        3000,
    );
}

#[test]
fn model_wide_board_at_the_bottom_of_i64() {
    let max = i64::MIN + 4_194_303;
    model_run(
        6,
        &[
            "RESOLUTION",
            "ms",
            "MIN",
            &i64::MIN.to_string(),
            "MAX",
            &max.to_string(),
        ],
        Layout::millis(i64::MIN, max),
        3000,
    );
}

/// The bar: at least 100,000 random operations per run against the
/// reference model (default layout), every reply checked.
#[test]
fn model_hundred_thousand_operations() {
    model_run(7, &[], Layout::seconds(S_MIN, S_MAX), 100_000);
}
