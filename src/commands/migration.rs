//! Boards during a reshard (issue 37): which boards are in a slot that this
//! node is migrating or importing, kept exact at almost no cost.
//!
//! A board's derived keys are names the server cannot route (only the
//! board key is declared). While its slot moves in `MIGRATE … KEYS`
//! batches, a board command therefore behaves like a multi-key Redis
//! command: every key it needs must be here, else it is refused with
//! `TRYAGAIN` ([`try_again`], [`super::BoardCtx::open`]), and it writes and
//! replicates nothing. So the source never creates again a key that has
//! already moved (the next batch would fail with `BUSYKEY`), and the
//! importing node never counts from zero a counter still on the source.
//!
//! How the state is known: the set of this node's moving slots
//! ([`crate::reshard::moving_slots`] of `CLUSTER NODES`) is cached. A
//! command filter sees every `CLUSTER` command before it runs: `SETSLOT s
//! MIGRATING|IMPORTING` adds `s` to the set at once (so the set is never
//! smaller than the truth), and any `CLUSTER` command that may change
//! slots marks the set stale. A stale set, or a board in a slot of the set
//! last read more than [`RECHECK_MS`] ago, is read again from `CLUSTER
//! NODES` (after the `CLUSTER` command ran: commands run one at a time) by
//! the next board command. Outside a migration a board command pays two
//! atomic loads ([`board_moving`]); every other command pays the filter's
//! length compare.
//!
//! Inside MULTI/EXEC the set is not read again (a queued `SETSLOT` may not
//! have run yet): it stays at least as large as the truth.

use crate::{ffi, keys, reshard};
use redis_module::{Context, ContextFlags, RedisValue};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// How often (ms) a board command in a moving slot reads `CLUSTER NODES`
/// again, so a migration that ended without a `CLUSTER` command on this
/// node (its state cleared by the cluster bus) stops costing checks.
pub const RECHECK_MS: i64 = 1000;

/// Slots in [`STATE`]'s set (0: no migration here, the fast path).
static MOVING: AtomicUsize = AtomicUsize::new(0);
/// The set must be read again before it is trusted (true at load: a node
/// restarted during a migration, or a `MODULE LOAD` during one).
static STALE: AtomicBool = AtomicBool::new(true);

struct State {
    /// This node's migrating and importing slots, sorted.
    slots: Vec<u16>,
    /// When they were read from `CLUSTER NODES` (unix ms).
    read_at: i64,
}

static STATE: Mutex<State> = Mutex::new(State {
    slots: Vec::new(),
    read_at: 0,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the command filter that follows `CLUSTER` commands. Error:
/// the server has no command filter API (every server hotrank loads on
/// has it).
pub fn register(ctx: &Context) -> Result<(), String> {
    if ffi::register_command_filter(ctx, 7, 4, on_command) {
        Ok(())
    } else {
        Err("hotrank needs the command filter API (RedisModule_RegisterCommandFilter) to follow slot migrations".into())
    }
}

/// The filter hook: `args` are the command's name and first arguments.
fn on_command(args: &[&[u8]]) {
    let Some((name, rest)) = args.split_first() else {
        return;
    };
    match reshard::slot_change(name, rest) {
        reshard::SlotChange::None => {}
        reshard::SlotChange::Starts(slot) => {
            let mut st = state();
            if let Err(at) = st.slots.binary_search(&slot) {
                st.slots.insert(at, slot);
            }
            MOVING.store(st.slots.len(), Ordering::Relaxed);
            STALE.store(true, Ordering::Relaxed);
        }
        reshard::SlotChange::Reread => STALE.store(true, Ordering::Relaxed),
    }
}

/// Whether the slot of `board` (a board key) is migrating or importing on
/// this node. Nothing moving and nothing to read again: two atomic loads.
#[inline(always)]
pub fn board_moving(ctx: &Context, board: &[u8]) -> bool {
    if MOVING.load(Ordering::Relaxed) == 0 && !STALE.load(Ordering::Relaxed) {
        return false;
    }
    slot_moving(ctx, keys::slot(board))
}

#[cold]
#[inline(never)]
fn slot_moving(ctx: &Context, slot: u16) -> bool {
    let now = ffi::now_ms();
    let mut st = state();
    let listed = st.slots.binary_search(&slot).is_ok();
    let old = now.saturating_sub(st.read_at) >= RECHECK_MS;
    let reread = STALE.load(Ordering::Relaxed) || (listed && old);
    if reread && !ctx.get_flags().contains(ContextFlags::MULTI) {
        read_slots(ctx, &mut st, now);
        return st.slots.binary_search(&slot).is_ok();
    }
    listed
}

/// Reads the set from `CLUSTER NODES` (empty outside cluster mode). On a
/// failed read the set is kept and stays stale.
fn read_slots(ctx: &Context, st: &mut State, now: i64) {
    if !ctx.get_flags().contains(ContextFlags::CLUSTER) {
        st.slots.clear();
    } else {
        let text = match ctx.call("CLUSTER", &["NODES"][..]) {
            Ok(RedisValue::SimpleString(s)) | Ok(RedisValue::BulkString(s)) => s.into_bytes(),
            Ok(RedisValue::StringBuffer(b)) => b,
            Ok(RedisValue::BulkRedisString(s)) => s.as_slice().to_vec(),
            Ok(RedisValue::VerbatimString((_, b))) => b,
            _ => return,
        };
        st.slots = reshard::moving_slots(&text);
    }
    st.read_at = now;
    MOVING.store(st.slots.len(), Ordering::Relaxed);
    STALE.store(false, Ordering::Relaxed);
}

/// The error of a board command that needs a key which is not on this node
/// while the board's slot moves: Redis's own for a multi-key command with
/// some keys missing, which cluster clients retry.
pub fn try_again() -> super::Fail {
    super::Fail::Msg("TRYAGAIN Multiple keys request during rehashing of slot".into())
}
