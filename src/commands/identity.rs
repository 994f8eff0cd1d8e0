//! A board's identity under memory pressure (docs/eviction.md): the one
//! documented error of a board whose identity key (HOT board record, RANK
//! layout) is gone, and the refusal to create a board implicitly while the
//! server's `maxmemory-policy` may evict identity keys.
//!
//! Both errors start with [`IDENTITY_MISSING`], name the key, the policy
//! and the way out, and are given before anything is written.

use super::{from_master_or_aof, BoardCtx, Fail, Res};
use crate::eviction;
use crate::keys::Kind;

/// The start of both errors of this module, for clients to match.
pub const IDENTITY_MISSING: &str = "ERR board identity missing:";

/// The board family a command belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Hot,
    Rank,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Hot => "HOT",
            Family::Rank => "RANK",
        }
    }

    fn identity(self) -> &'static str {
        match self {
            Family::Hot => "HOT board record",
            Family::Rank => "RANK layout",
        }
    }

    fn settings(self) -> &'static str {
        match self {
            Family::Hot => "[settings]",
            Family::Rank => "[layout]",
        }
    }
}

/// The server's policy as the errors show it.
fn policy_name() -> String {
    let p = eviction::policy();
    if p.is_empty() {
        "unknown".into()
    } else {
        p
    }
}

/// The error of a board ZSET without its identity key: the key was evicted
/// (or deleted) apart from the data, or the ZSET was never a board of this
/// family; the module cannot tell which. The way out: `<F>.REPAIR K
/// <settings>` with the board's own settings, or another key.
pub fn lost(b: &BoardCtx, f: Family) -> Fail {
    Fail::Msg(format!(
        "{IDENTITY_MISSING} '{key}' holds a ZSET but no {what}: evicted (maxmemory-policy is {policy}) or deleted, \
         or never written by {fam}; nothing was written. Rebuild it with {fam}.REPAIR {key} {set} \
         giving the board's own settings, or use another key (docs/eviction.md)",
        key = b.key.as_slice().escape_ascii(),
        what = f.identity(),
        policy = policy_name(),
        fam = f.name(),
        set = f.settings(),
    ))
}

/// The error of a write that would create a board implicitly (HOT.VIEW,
/// HOT.PUBLISH, RANK.INCR, RANK.SET, RANK.MINCR on a board without any
/// key) while the policy may have evicted the whole board: creating it
/// with default settings could silently change a board's settings.
fn missing(b: &BoardCtx, f: Family) -> Fail {
    Fail::Msg(format!(
        "{IDENTITY_MISSING} '{key}' has no {what}, and maxmemory-policy {policy} may have evicted it whole, so it \
         is not created with default settings; nothing was written. Create it with {fam}.CREATE {key} {set}, \
         or use noeviction or a volatile-* policy (docs/eviction.md)",
        key = b.key.as_slice().escape_ascii(),
        what = f.identity(),
        policy = policy_name(),
        fam = f.name(),
        set = f.settings(),
    ))
}

/// Refuses (with [`missing`]) to go on with a board that has no identity
/// key, when the server's policy may evict identity keys: an implicit
/// create, or HOT.INFO / RANK.INFO reporting default settings. A command
/// from the master or the AOF is never refused: the master decided, and a
/// replica or an AOF load must follow whatever its own configs.
pub fn refuse_without_identity(b: &BoardCtx, f: Family) -> Res<()> {
    if eviction::is_unsafe() && !from_master_or_aof(b.ctx) {
        return Err(missing(b, f));
    }
    Ok(())
}

/// The error of a ZSET that belongs to the other family: a RANK board given
/// to a HOT command, or a HOT board to a RANK command.
pub fn other_family(b: &BoardCtx, is: Family) -> Fail {
    let (what, use_) = (
        is.identity(),
        if is == Family::Hot { "RANK" } else { "HOT" },
    );
    Fail::Msg(format!(
        "ERR '{}' is a {is} board (it has a {what}), not a {use_} board; use {is} commands or another key",
        b.key.as_slice().escape_ascii(),
        is = is.name(),
    ))
}

/// Whether the board has a RANK layout (read access is enough; a key the
/// ACL hides counts as missing: this only chooses an error's wording).
pub fn has_rank_layout(b: &BoardCtx) -> bool {
    b.derived(Kind::Layout, &[], false)
        .is_ok_and(|n| matches!(b.exists(&n), Ok(true)))
}

/// Whether the board has a HOT board record at epoch 0 or an epoch key
/// (as [`has_rank_layout`], only for an error's wording).
pub fn has_hot_record(b: &BoardCtx) -> bool {
    let epoch_key = b
        .epoch_name(false)
        .is_ok_and(|n| matches!(b.exists(&n), Ok(true)));
    epoch_key
        || b.derived_at(0, Kind::HotBoard, &[], false)
            .is_ok_and(|n| matches!(b.exists(&n), Ok(true)))
}
