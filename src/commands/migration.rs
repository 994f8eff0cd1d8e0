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
//! MIGRATING|IMPORTING` adds `s` to the set at once, as a pending slot,
//! and any other `CLUSTER` command that may change slots marks the set
//! stale. A stale set is read again from `CLUSTER NODES` by the next board
//! command; so is the set, at most every [`RECHECK_MS`], for a board in a
//! slot of the set or while a slot is pending. A pending slot stays in the
//! set across those reads until `CLUSTER NODES` shows it or
//! [`reshard::PENDING_GRACE_MS`] passes ([`reshard::merge_pending`]):
//! Valkey 8 and later, on a primary with replicas, applies the `SETSLOT`
//! only once its replicas acknowledge it, and then without passing the
//! filter again, so a read in between does not show the slot yet. A
//! replication role change and a module load mark the set stale. Outside a
//! migration a board command pays two atomic loads ([`board_moving`]);
//! every other command pays the filter's length compare.
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
    /// This node's migrating and importing slots, sorted: those `CLUSTER
    /// NODES` showed and those pending.
    slots: Vec<u16>,
    /// Slots the filter saw start moving that `CLUSTER NODES` has not shown
    /// yet, with when they were seen (unix ms).
    pending: Vec<(u16, i64)>,
    /// The set must be read again at the next board command (a `CLUSTER`
    /// command that may change slots, a role change, a load).
    must_read: bool,
    /// When they were read from `CLUSTER NODES` (unix ms).
    read_at: i64,
}

static STATE: Mutex<State> = Mutex::new(State {
    slots: Vec::new(),
    pending: Vec::new(),
    must_read: true,
    read_at: 0,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the command filter that follows `CLUSTER` commands. Error:
/// the server has no command filter API (every server hotrank loads on
/// has it).
/// The set starts empty and stale (a node restarted or a module loaded
/// during a migration; a reload in the same process keeps the statics).
pub fn register(ctx: &Context) -> Result<(), String> {
    {
        let mut st = state();
        st.slots.clear();
        st.pending.clear();
        st.read_at = 0;
        mark_stale(&mut st);
    }
    ffi::on_role_change(ctx, || mark_stale(&mut state()));
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
            let now = ffi::now_ms();
            let mut st = state();
            if let Err(at) = st.slots.binary_search(&slot) {
                st.slots.insert(at, slot);
            }
            st.pending.retain(|&(s, _)| s != slot);
            st.pending.push((slot, now));
            MOVING.store(st.slots.len(), Ordering::Relaxed);
            STALE.store(true, Ordering::Relaxed);
        }
        reshard::SlotChange::Ends(slot) => {
            // A migration that ended before any board command read CLUSTER
            // NODES would otherwise stay pending (in the set, TRYAGAIN) for
            // the whole grace period.
            let mut st = state();
            st.pending.retain(|&(s, _)| s != slot);
            mark_stale(&mut st);
        }
        reshard::SlotChange::Reread => mark_stale(&mut state()),
    }
}

/// The set must be read again at the next board command.
fn mark_stale(st: &mut State) {
    st.must_read = true;
    STALE.store(true, Ordering::Relaxed);
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
    let reread = st.must_read || ((listed || !st.pending.is_empty()) && old);
    if reread && !ctx.get_flags().contains(ContextFlags::MULTI) {
        read_slots(ctx, &mut st, now);
        return st.slots.binary_search(&slot).is_ok();
    }
    listed
}

/// Reads the set from `CLUSTER NODES` (empty outside cluster mode), keeping
/// the pending slots it does not show yet ([`reshard::merge_pending`]): the
/// set stays stale while one is left. On a failed read the set is kept and
/// stays stale.
fn read_slots(ctx: &Context, st: &mut State, now: i64) {
    if !ctx.get_flags().contains(ContextFlags::CLUSTER) {
        st.slots.clear();
        st.pending.clear();
    } else {
        let text = match ctx.call("CLUSTER", &["NODES"][..]) {
            Ok(RedisValue::SimpleString(s)) | Ok(RedisValue::BulkString(s)) => s.into_bytes(),
            Ok(RedisValue::StringBuffer(b)) => b,
            Ok(RedisValue::BulkRedisString(s)) => s.as_slice().to_vec(),
            Ok(RedisValue::VerbatimString((_, b))) => b,
            _ => return,
        };
        let shown = reshard::moving_slots(&text);
        st.slots = reshard::merge_pending(&shown, &mut st.pending, now, reshard::PENDING_GRACE_MS);
    }
    st.read_at = now;
    st.must_read = false;
    MOVING.store(st.slots.len(), Ordering::Relaxed);
    STALE.store(!st.pending.is_empty(), Ordering::Relaxed);
}

/// The error of a board command that needs a key which is not on this node
/// while the board's slot moves: Redis's own for a multi-key command with
/// some keys missing, which cluster clients retry.
pub fn try_again() -> super::Fail {
    super::Fail::Msg("TRYAGAIN Multiple keys request during rehashing of slot".into())
}
