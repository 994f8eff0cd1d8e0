//! The reference model of a RANK board, split out of tests/rank.rs for
//! tests/rank.rs and tests/rank_model.rs. Included with
//! `#[path = "common/rank_reference.rs"] mod rank_reference;` after `rank_client`.
#![allow(dead_code)]

use crate::rank_client::*;
use redis::{Connection, Value};
use std::collections::BTreeMap;

// ----------------------------------------------------- reference model

#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub unit_ms: i64,
    pub min: i64,
    pub max: i64,
}

impl Layout {
    pub fn seconds(min: i64, max: i64) -> Layout {
        Layout {
            unit_ms: 1000,
            min,
            max,
        }
    }
    pub fn millis(min: i64, max: i64) -> Layout {
        Layout {
            unit_ms: 1,
            min,
            max,
        }
    }
}

/// What a board must hold: member → (score, time reached in ms, floored to
/// the resolution).
pub struct Model {
    pub l: Layout,
    pub m: BTreeMap<Vec<u8>, (i64, i64)>,
}

impl Model {
    pub fn new(l: Layout) -> Model {
        Model {
            l,
            m: BTreeMap::new(),
        }
    }

    pub fn floor(&self, t_ms: i64) -> i64 {
        t_ms - (t_ms - EPOCH_MS).rem_euclid(self.l.unit_ms)
    }

    /// Applies a write of `new` (or the error computing it). Returns the
    /// expected reply and whether the time must be read back (no AT given).
    pub fn write(
        &mut self,
        member: &[u8],
        new: Result<i64, String>,
        at_ms: Option<i64>,
    ) -> Result<(i64, bool), String> {
        let new = new?;
        let old = self.m.get(member).map(|v| v.0);
        if old == Some(new) {
            return Ok((new, false));
        }
        if new < self.l.min || new > self.l.max {
            return Err(out_of_range(new, self.l.min, self.l.max));
        }
        let t = at_ms.map_or(0, |t| self.floor(t));
        self.m.insert(member.to_vec(), (new, t));
        Ok((new, at_ms.is_none()))
    }

    pub fn incr(
        &mut self,
        member: &[u8],
        delta: i64,
        at_ms: Option<i64>,
    ) -> Result<(i64, bool), String> {
        let old = self.m.get(member).map_or(0, |v| v.0);
        let new = old
            .checked_add(delta)
            .ok_or_else(|| format!("ERR delta {delta} would overflow the score"));
        self.write(member, new, at_ms)
    }

    pub fn rem(&mut self, names: &[&[u8]]) -> i64 {
        names
            .iter()
            .filter(|m| self.m.remove(**m).is_some())
            .count() as i64
    }

    /// (member, score, time) best first.
    pub fn order(&self) -> Vec<(Vec<u8>, i64, i64)> {
        let mut v: Vec<_> = self
            .m
            .iter()
            .map(|(m, (s, t))| (m.clone(), *s, *t))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)));
        v
    }

    pub fn range_reply(&self, start: i64, stop: i64, withscores: bool) -> Value {
        let o = self.order();
        let n = o.len() as i64;
        let start = if start < 0 { (start + n).max(0) } else { start };
        let stop = if stop < 0 { stop + n } else { stop.min(n - 1) };
        let mut out = Vec::new();
        if start <= stop && start < n {
            for (m, s, _) in &o[start as usize..=stop as usize] {
                out.push(bulk(m));
                if withscores {
                    out.push(int(*s));
                }
            }
        }
        arr(out)
    }

    pub fn rank_reply(&self, member: &[u8], ties: bool) -> Value {
        let o = self.order();
        let Some(pos) = o.iter().position(|e| e.0 == member) else {
            return Value::Nil;
        };
        if ties {
            int(o.iter().filter(|e| e.1 > o[pos].1).count() as i64)
        } else {
            int(pos as i64)
        }
    }

    pub fn score_reply(&self, member: &[u8], with_time: bool) -> Value {
        match self.m.get(member) {
            None => Value::Nil,
            Some((s, _)) if !with_time => int(*s),
            Some((s, t)) => withtime(*s, &fmt_ms(*t)),
        }
    }

    /// Adds the read checks of `member` to a pipeline and their expected replies.
    pub fn add_member_checks(
        &self,
        p: &mut redis::Pipeline,
        want: &mut Vec<Value>,
        k: &str,
        member: &[u8],
    ) {
        p.cmd("RANK.RANK").arg(k).arg(member);
        want.push(self.rank_reply(member, false));
        p.cmd("RANK.RANK").arg(k).arg(member).arg("TIES");
        want.push(self.rank_reply(member, true));
        p.cmd("RANK.SCORE").arg(k).arg(member);
        want.push(self.score_reply(member, false));
        p.cmd("RANK.SCORE").arg(k).arg(member).arg("WITHTIME");
        want.push(self.score_reply(member, true));
    }

    /// Full comparison: every member and the whole range.
    pub fn check_all(&self, c: &mut Connection, k: &str) {
        let mut p = redis::pipe();
        let mut want = Vec::new();
        p.cmd("RANK.RANGE").arg(k).arg(0).arg(-1).arg("WITHSCORES");
        want.push(self.range_reply(0, -1, true));
        p.cmd("RANK.CARD").arg(k);
        want.push(int(self.m.len() as i64));
        p.cmd("ZCARD").arg(k);
        want.push(int(self.m.len() as i64));
        for m in self.m.keys() {
            self.add_member_checks(&mut p, &mut want, k, m);
        }
        let got: Vec<Value> = p.query(c).expect("check pipeline");
        compare(&got, &want, "full check");
    }
}

pub fn compare(got: &[Value], want: &[Value], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: reply count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g, w, "{what}: check #{i}");
    }
}
