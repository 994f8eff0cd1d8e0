//! Slot migration state, pure Rust (no Redis): which of this node's hash
//! slots are being moved (`MIGRATING` to another node, or `IMPORTING` from
//! one), read from `CLUSTER NODES`, and what a `CLUSTER` command may
//! change of it. The glue (`commands::migration`) keeps the set exact and
//! asks it before a board command runs: a board whose slot is in the set
//! behaves like a multi-key Redis command during a reshard (a key it needs
//! that is not here gets `TRYAGAIN`); any other board pays nothing.

/// Number of hash slots in Redis Cluster.
pub const SLOTS: usize = 16384;

/// The slots that `CLUSTER NODES` shows as migrating or importing on the
/// node marked `myself`: the `[slot->-<node>]` and `[slot-<-<node>]`
/// entries of its line. An empty set for text without a `myself` line.
pub fn moving_slots(cluster_nodes: &[u8]) -> Vec<u16> {
    let mut out = Vec::new();
    for line in cluster_nodes.split(|&b| b == b'\n') {
        let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let Some(flags) = fields.nth(2) else {
            continue;
        };
        if !flags.split(|&b| b == b',').any(|f| f == b"myself") {
            continue;
        }
        // Fields 3..=7 are master, ping, pong, epoch and link state.
        for f in fields.skip(5) {
            if let Some(slot) = f
                .strip_prefix(b"[")
                .and_then(|f| f.split(|&b| b == b'-').next())
                .and_then(parse_slot)
            {
                out.push(slot);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// How long (ms) a slot that `CLUSTER SETSLOT <slot> MIGRATING|IMPORTING`
/// added is kept in the set while `CLUSTER NODES` does not show it yet.
/// Valkey 8 and later, on a primary with online replicas, applies that
/// `SETSLOT` only after its replicas acknowledge it (and then without
/// passing the command filter again); 10 s is longer than the default wait
/// for that acknowledgement (2 s).
pub const PENDING_GRACE_MS: i64 = 10_000;

/// Merges a fresh read of `CLUSTER NODES` (`shown`, from [`moving_slots`])
/// with the slots the command filter saw start moving (`pending`: slot and
/// when it was seen, unix ms). A pending slot that `shown` lists, or seen
/// `grace_ms` or more before `now`, leaves `pending`; the others stay, and
/// stay in the set. Returns the set: `shown` and what is left pending,
/// sorted, without duplicates.
pub fn merge_pending(
    shown: &[u16],
    pending: &mut Vec<(u16, i64)>,
    now: i64,
    grace_ms: i64,
) -> Vec<u16> {
    pending.retain(|&(slot, at)| {
        shown.binary_search(&slot).is_err() && now.saturating_sub(at) < grace_ms
    });
    let mut out: Vec<u16> = shown.to_vec();
    out.extend(pending.iter().map(|&(slot, _)| slot));
    out.sort_unstable();
    out.dedup();
    out
}

/// A slot number in `0..16384`, as decimal text.
pub fn parse_slot(text: &[u8]) -> Option<u16> {
    if text.is_empty() || text.len() > 5 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = text.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    (n < SLOTS as u32).then_some(n as u16)
}

/// What a command seen before it runs may do to this node's migration
/// state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotChange {
    /// Nothing (any command that is not `CLUSTER`, or a `CLUSTER` read).
    None,
    /// `CLUSTER SETSLOT <slot> MIGRATING|IMPORTING`: the slot may start
    /// moving.
    Starts(u16),
    /// `CLUSTER SETSLOT <slot> NODE|STABLE`: the slot's migration ends here;
    /// it is no longer pending, and the state must be read again.
    Ends(u16),
    /// Any other `CLUSTER` command that may end or change a migration
    /// (`RESET`, `FAILOVER`, `DELSLOTS`, …): the state must be read again.
    Reread,
}

/// `CLUSTER` subcommands that only read: they change no slot's state.
const READS: [&[u8]; 12] = [
    b"NODES",
    b"SLOTS",
    b"SHARDS",
    b"INFO",
    b"MYID",
    b"MYSHARDID",
    b"KEYSLOT",
    b"COUNTKEYSINSLOT",
    b"GETKEYSINSLOT",
    b"LINKS",
    b"COUNT-FAILURE-REPORTS",
    b"REPLICAS",
];

/// What the command `name args…` (`args[0]` is the first argument after the
/// name) may change of this node's migration state. Called for every
/// command, so the common case (`name` is not `CLUSTER`) costs a length
/// compare.
pub fn slot_change(name: &[u8], args: &[&[u8]]) -> SlotChange {
    if name.len() != 7 || !name.eq_ignore_ascii_case(b"CLUSTER") {
        return SlotChange::None;
    }
    let Some(sub) = args.first() else {
        return SlotChange::None;
    };
    if READS.iter().any(|r| sub.eq_ignore_ascii_case(r)) {
        return SlotChange::None;
    }
    if sub.eq_ignore_ascii_case(b"SETSLOT") {
        let slot = args.get(1).and_then(|s| parse_slot(s));
        let how = args.get(2).copied().unwrap_or_default();
        if let Some(slot) = slot {
            if how.eq_ignore_ascii_case(b"MIGRATING") || how.eq_ignore_ascii_case(b"IMPORTING") {
                return SlotChange::Starts(slot);
            }
            if how.eq_ignore_ascii_case(b"NODE") || how.eq_ignore_ascii_case(b"STABLE") {
                return SlotChange::Ends(slot);
            }
        }
    }
    SlotChange::Reread
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODES: &[u8] = b"\
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460 [5461-<-292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f] [93->-292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f]
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922 [7->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]
";

    #[test]
    fn reads_only_myself_line() {
        assert_eq!(moving_slots(NODES), vec![93, 5461]);
        assert_eq!(moving_slots(b""), Vec::<u16>::new());
        let stable = b"abc 127.0.0.1:1@2 myself,master - 0 0 1 connected 0-16383\n";
        assert_eq!(moving_slots(stable), Vec::<u16>::new());
    }

    #[test]
    fn pending_slots_wait_for_cluster_nodes() {
        // SETSLOT 7 MIGRATING seen at 1000, not applied yet (Valkey waits
        // for its replicas): a read without it keeps it.
        let mut pending = vec![(7u16, 1000i64)];
        assert_eq!(merge_pending(&[3], &mut pending, 1005, 10_000), vec![3, 7]);
        assert_eq!(pending, vec![(7, 1000)]);
        // An empty read keeps it too.
        assert_eq!(merge_pending(&[], &mut pending, 5000, 10_000), vec![7]);
        // Shown by CLUSTER NODES: no longer pending, still in the set.
        assert_eq!(merge_pending(&[7], &mut pending, 5001, 10_000), vec![7]);
        assert!(pending.is_empty());
        // Never applied (SETSLOT failed): dropped after the grace period.
        let mut pending = vec![(9u16, 1000i64), (2, 8000)];
        assert_eq!(merge_pending(&[], &mut pending, 10_999, 10_000), vec![2, 9]);
        assert_eq!(merge_pending(&[], &mut pending, 11_000, 10_000), vec![2]);
        assert_eq!(pending, vec![(2, 8000)]);
        assert_eq!(
            merge_pending(&[], &mut pending, 18_000, 10_000),
            Vec::<u16>::new()
        );
        assert!(pending.is_empty());
    }

    #[test]
    fn slot_numbers() {
        assert_eq!(parse_slot(b"0"), Some(0));
        assert_eq!(parse_slot(b"16383"), Some(16383));
        assert_eq!(parse_slot(b"16384"), None);
        assert_eq!(parse_slot(b""), None);
        assert_eq!(parse_slot(b"-1"), None);
        assert_eq!(parse_slot(b"123456"), None);
    }

    #[test]
    fn cluster_commands() {
        let c = |args: &[&[u8]]| slot_change(b"cluster", args);
        assert_eq!(
            c(&[b"setslot", b"12", b"migrating", b"id"]),
            SlotChange::Starts(12)
        );
        assert_eq!(
            c(&[b"SETSLOT", b"12", b"IMPORTING", b"id"]),
            SlotChange::Starts(12)
        );
        assert_eq!(c(&[b"SETSLOT", b"12", b"STABLE"]), SlotChange::Ends(12));
        assert_eq!(
            c(&[b"SETSLOT", b"12", b"NODE", b"id"]),
            SlotChange::Ends(12)
        );
        assert_eq!(
            c(&[b"SETSLOT", b"x", b"MIGRATING", b"id"]),
            SlotChange::Reread
        );
        assert_eq!(c(&[b"RESET"]), SlotChange::Reread);
        assert_eq!(c(&[b"nodes"]), SlotChange::None);
        assert_eq!(c(&[b"GETKEYSINSLOT", b"1", b"10"]), SlotChange::None);
        assert_eq!(c(&[]), SlotChange::None);
        assert_eq!(slot_change(b"HOT.VIEW", &[b"SETSLOT"]), SlotChange::None);
        assert_eq!(slot_change(b"MIGRATE", &[]), SlotChange::None);
    }
}
