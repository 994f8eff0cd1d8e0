//! Boards survive a reshard (issue 37), on a real 2-master cluster.
//!
//! A HOT board and a RANK board with day, week and month periods share one
//! hash tag, whose slot is the first slot of node 0. While writes keep
//! coming (HOT.VIEW and RANK.INCR, sent the way a cluster client sends
//! them: to the slot's owner, following MOVED, following ASK with ASKING,
//! retrying TRYAGAIN later):
//! 1. the slot moves from node 0 to node 1 in `MIGRATE … KEYS` batches of
//!    50 (CLUSTER SETSLOT IMPORTING / MIGRATING, GETKEYSINSLOT, MIGRATE,
//!    SETSLOT NODE), with writes between the batches: every batch
//!    succeeds (no `BUSYKEY`), the slot ends empty on node 0, and some
//!    writes were refused with TRYAGAIN and some followed ASK;
//!    With the AOF on, the first 40 refused writes are checked to add
//!    nothing to either node's AOF (nothing written, nothing replicated);
//! 2. `redis-cli --cluster reshard` moves it back while a writer thread
//!    keeps writing, with `hotrank.replicate commands`.
//!
//! After each, every acknowledged write is replayed, in the order it was
//! acknowledged, on a standalone server: every reply the cluster gave
//! equals the standalone's, and the board's keys on the owner (every key
//! of the slot, by DUMP) equal the standalone's. So every acknowledged
//! view and increment counted exactly once, and a refused one not at all.

mod common;
use common::cluster::{start_cluster, Node};
use common::rng::Rng;
use common::*;
use redis::{Connection, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const RANGES: [(u16, u16); 2] = [(0, 8191), (8192, 16383)];

type Op = Vec<Vec<u8>>;

/// A hash tag whose slot is `slot`.
fn tag_for(slot: u16) -> String {
    (0u64..)
        .map(|i| format!("rs{i}"))
        .find(|t| hotrank::keys::slot(t.as_bytes()) == slot)
        .expect("some tag hashes to every slot")
}

fn cmd_of(op: &[Vec<u8>]) -> redis::Cmd {
    let mut c = redis::cmd(std::str::from_utf8(&op[0]).expect("command name"));
    for a in &op[1..] {
        c.arg(a);
    }
    c
}

fn show_op(op: &[Vec<u8>]) -> String {
    op.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The page this test backs: its examples are run here.
const DOC: &str = include_str!("../docs/resharding.md");

/// The line of [`DOC`] that starts with `prefix`.
fn doc_line(prefix: &str) -> &'static str {
    DOC.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("docs/resharding.md has no line '{prefix}…'"))
}

/// What one slot's cluster client saw.
#[derive(Default, Debug)]
struct Seen {
    /// The first TRYAGAIN error, as redis-cli shows it.
    tryagain_text: Option<String>,
    tryagain: usize,
    ask: usize,
    moved: usize,
}

/// A cluster client in miniature for one slot: sends a command to the node
/// it believes owns the slot, follows MOVED (and remembers the new owner)
/// and ASK (ASKING, then the command on the node named), and returns
/// `None` on TRYAGAIN: the caller retries later, as cluster clients do.
struct SlotClient {
    conns: Vec<(u16, Connection)>,
    owner: usize,
    seen: Seen,
}

impl SlotClient {
    fn new(nodes: &[Node], owner: usize) -> SlotClient {
        SlotClient {
            conns: nodes
                .iter()
                .map(|n| (n.server.port, n.server.conn()))
                .collect(),
            owner,
            seen: Seen::default(),
        }
    }

    fn node_of(&self, addr: &str) -> usize {
        let port: u16 = addr
            .rsplit(':')
            .next()
            .and_then(|p| p.split('@').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("redirect address {addr}"));
        self.conns
            .iter()
            .position(|(p, _)| *p == port)
            .unwrap_or_else(|| panic!("no node on port {port}"))
    }

    fn send(&mut self, op: &[Vec<u8>]) -> Option<Value> {
        let (mut node, mut asking) = (self.owner, false);
        for _ in 0..4 {
            let c = &mut self.conns[node].1;
            if asking {
                q(c, &["ASKING"]).expect("ASKING");
            }
            let e = match cmd_of(op).query::<Value>(c) {
                Ok(v) => return Some(v),
                Err(e) => e,
            };
            match e.code() {
                Some("TRYAGAIN") => {
                    self.seen.tryagain += 1;
                    self.seen.tryagain_text.get_or_insert_with(|| {
                        format!("(error) TRYAGAIN {}", e.detail().unwrap_or_default())
                    });
                    return None;
                }
                Some("MOVED") => {
                    self.seen.moved += 1;
                    node = self.node_of(e.redirect_node().expect("MOVED address").0);
                    self.owner = node;
                    asking = false;
                }
                Some("ASK") => {
                    self.seen.ask += 1;
                    node = self.node_of(e.redirect_node().expect("ASK address").0);
                    asking = true;
                }
                _ => panic!("{}: {e}", show_op(op)),
            }
        }
        panic!("{}: redirected in a loop", show_op(op))
    }
}

/// The writes: views of 40 articles by 400 visitors (repeats within the
/// dedup window are duplicates), and increments of 30 members of a board
/// with periods, all at one time `at` (unix seconds), so the replies do not
/// depend on when each runs.
struct Workload {
    rng: Rng,
    hot: String,
    lb: String,
    at: String,
    n: u64,
}

impl Workload {
    fn new(seed: u64, tag: &str, at: i64) -> Workload {
        Workload {
            rng: Rng(seed),
            hot: format!("hot:{{{tag}}}"),
            lb: format!("lb:{{{tag}}}"),
            at: at.to_string(),
            n: 0,
        }
    }

    fn next(&mut self) -> Op {
        self.n += 1;
        let parts: Vec<String> = if self.n % 3 == 0 {
            vec![
                "RANK.INCR".into(),
                self.lb.clone(),
                format!("m{}", self.rng.below(30)),
                (1 + self.rng.below(9)).to_string(),
                "AT".into(),
                self.at.clone(),
            ]
        } else {
            vec![
                "HOT.VIEW".into(),
                self.hot.clone(),
                format!("a{}", self.rng.below(40)),
                format!("v{}", self.rng.below(400)),
                "AT".into(),
                self.at.clone(),
            ]
        };
        parts.into_iter().map(String::into_bytes).collect()
    }
}

fn my_id(c: &mut Connection) -> String {
    redis::cmd("CLUSTER")
        .arg("MYID")
        .query(c)
        .expect("CLUSTER MYID")
}

fn count_in_slot(c: &mut Connection, slot: u16) -> i64 {
    redis::cmd("CLUSTER")
        .arg("COUNTKEYSINSLOT")
        .arg(slot)
        .query(c)
        .expect("COUNTKEYSINSLOT")
}

/// Bytes a node has appended to its AOF: `aof_current_size` plus
/// `aof_buffer_length`.
fn aof_size(c: &mut Connection) -> i64 {
    let text: String = redis::cmd("INFO")
        .arg("persistence")
        .query(c)
        .expect("INFO");
    // The file plus what waits in the AOF buffer: with `appendfsync
    // everysec` the server postpones a write (up to 2 s) while a background
    // fsync runs, so the file alone can grow with an earlier command's
    // bytes between two reads; the sum grows only with new writes.
    let field = |name: &str| -> i64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in INFO persistence"))
    };
    field("aof_current_size:") + field("aof_buffer_length:")
}

/// Turns the AOF on (CONFIG SET appendonly yes) and waits for its first
/// rewrite to end, so `aof_current_size` then grows only with writes.
fn aof_on(c: &mut Connection) {
    q(c, &["CONFIG", "SET", "appendonly", "yes"]).expect("appendonly");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text: String = redis::cmd("INFO")
            .arg("persistence")
            .query(c)
            .expect("INFO");
        if text.contains("aof_enabled:1")
            && text.contains("aof_rewrite_in_progress:0")
            && text.contains("aof_rewrite_scheduled:0")
        {
            return;
        }
        assert!(Instant::now() < deadline, "AOF rewrite did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until every node's CLUSTER SLOTS gives `slot` to the node on `port`.
fn wait_owner(nodes: &[Node], slot: u16, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    for n in nodes {
        let mut c = n.server.conn();
        loop {
            let ranges: Vec<Vec<Value>> = redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query(&mut c)
                .expect("CLUSTER SLOTS");
            let int = |v: &Value| redis::from_redis_value::<i64>(v.clone()).unwrap_or(-1);
            let owns = |r: &Vec<Value>| {
                let first = match r.get(2) {
                    Some(Value::Array(node)) => node.get(1).map(int),
                    _ => None,
                };
                r.len() >= 3
                    && (int(&r[0])..=int(&r[1])).contains(&i64::from(slot))
                    && first == Some(i64::from(port))
            };
            if ranges.iter().any(owns) {
                break;
            }
            assert!(Instant::now() < deadline, "slot {slot} not on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The acknowledged writes, in order, with the reply each got.
type Acked = Vec<(Op, Value)>;

/// Replays `acked` on the standalone `reference` (which already holds the
/// writes acknowledged before): each reply must equal the cluster's.
fn replay(reference: &mut Connection, acked: &[(Op, Value)]) {
    for (op, got) in acked {
        let want: Value = cmd_of(op).query(reference).expect("reference write");
        assert_eq!(
            got,
            &want,
            "{}: the cluster's reply differs from the standalone's",
            show_op(op)
        );
    }
}

/// Whether `k` names a dedup shard string (`K\0dd:…`, or `K\0~e:dd:…` for a
/// dropped board's epoch).
fn is_dedup_string(k: &[u8]) -> bool {
    let Some(z) = k.iter().position(|&b| b == 0) else {
        return false;
    };
    let mut rest = &k[z + 1..];
    // A board key without a hash tag: `K\0{K}…`.
    if rest.starts_with(b"{") {
        let close = rest
            .iter()
            .position(|&b| b == b'}')
            .unwrap_or(rest.len() - 1);
        rest = &rest[close + 1..];
    }
    if let Some(r) = rest.strip_prefix(b"~") {
        let digits = r.iter().take_while(|b| b.is_ascii_digit()).count();
        rest = r[digits..].strip_prefix(b":").unwrap_or(b"");
    }
    rest.starts_with(b"dd:")
}

/// A dedup shard string with the end of each section (unix ms of the
/// server clock that wrote it, in seconds: bytes 8..12 of each marker, see
/// `hot::dedup`) zeroed: the only bytes that differ between two servers
/// given the same commands at different moments.
fn without_section_ends(v: &[u8]) -> Vec<u8> {
    use hotrank::hot::dedup::{is_marker, ENTRY};
    let mut out = v.to_vec();
    for rec in out.chunks_exact_mut(ENTRY) {
        if is_marker(u64::from_le_bytes(rec[..8].try_into().expect("8 bytes"))) {
            rec[8..].fill(0);
        }
    }
    out
}

/// Every key of `slot` on `owner` equals the standalone's (same names, same
/// DUMP; a dedup string the same value but for its sections' ends), and the
/// standalone holds no other key.
fn assert_same_keys(owner: &mut Connection, reference: &mut Connection, slot: u16) {
    let n = count_in_slot(owner, slot);
    let names: Vec<Vec<u8>> = redis::cmd("CLUSTER")
        .arg("GETKEYSINSLOT")
        .arg(slot)
        .arg(n + 10)
        .query(owner)
        .expect("GETKEYSINSLOT");
    let mut got = BTreeMap::new();
    for k in names {
        let d: Vec<u8> = redis::cmd("DUMP").arg(&k).query(owner).expect("DUMP");
        got.insert(k, d);
    }
    let want: BTreeMap<Vec<u8>, Vec<u8>> = keyspace(reference)
        .into_iter()
        .map(|(k, (d, _))| (k, d))
        .collect();
    assert_eq!(got.len(), want.len(), "key count");
    for (k, d) in &want {
        if is_dedup_string(k) && got.contains_key(k) {
            let get = |c: &mut Connection| -> Vec<u8> {
                let v: Vec<u8> = redis::cmd("GET").arg(k).query(c).expect("GET");
                without_section_ends(&v)
            };
            assert_eq!(
                get(owner),
                get(reference),
                "dedup string {} differs from the standalone's",
                k.escape_ascii()
            );
            continue;
        }
        assert_eq!(
            got.get(k),
            Some(d),
            "key {} differs from the standalone's",
            k.escape_ascii()
        );
    }
}

/// What [`migrate_in_batches`] did.
struct Moved {
    batches: usize,
    /// Writes acknowledged by the source itself (no ASK) during the move.
    on_source: usize,
    /// Refused writes checked to add nothing to either node's AOF.
    aof_checks: usize,
    /// Writes refused with TRYAGAIN, not yet acknowledged.
    pending: Vec<Op>,
}

/// Step 2 of a slot move: `MIGRATE … KEYS` batches of 50 of `slot`'s keys
/// from `s` to `dst` (whose connection is `d`) until the slot is empty on
/// `s`, with 8 writes of `work` between batches, sent by `client` (a
/// refused write is kept and sent again before the next batch; the first
/// `aof_limit` refusals are checked to change neither node's AOF). Every
/// batch must succeed.
#[allow(clippy::too_many_arguments)]
fn migrate_in_batches(
    s: &mut Connection,
    d: &mut Connection,
    dst: &Node,
    slot: u16,
    work: &mut Workload,
    client: &mut SlotClient,
    acked: &mut Acked,
    aof_limit: usize,
) -> Moved {
    let mut aof_checks = 0;
    let mut pending: Vec<Op> = Vec::new();
    let (mut batches, mut on_source) = (0, 0);
    let dst_port = dst.server.port.to_string();
    loop {
        let keys: Vec<Vec<u8>> = redis::cmd("CLUSTER")
            .arg("GETKEYSINSLOT")
            .arg(slot)
            .arg(50)
            .query(s)
            .expect("GETKEYSINSLOT");
        if keys.is_empty() {
            break;
        }
        pending.extend((0..8).map(|_| work.next()));
        let mut left = Vec::new();
        for op in pending.drain(..) {
            let asks = client.seen.ask;
            let aof = (aof_checks < aof_limit).then(|| (aof_size(s), aof_size(d)));
            match client.send(&op) {
                Some(v) => {
                    on_source += usize::from(client.seen.ask == asks);
                    acked.push((op, v));
                }
                None => {
                    if let Some(before) = aof {
                        let after = (aof_size(s), aof_size(d));
                        assert_eq!(before, after, "{}: refused, yet written", show_op(&op));
                        aof_checks += 1;
                    }
                    left.push(op)
                }
            }
        }
        pending = left;
        let mut m = redis::cmd("MIGRATE");
        m.arg("127.0.0.1")
            .arg(&dst_port)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(&keys);
        let out: redis::RedisResult<String> = m.query(s);
        assert!(
            matches!(out.as_deref(), Ok("OK") | Ok("NOKEY")),
            "MIGRATE batch {batches}: {out:?}"
        );
        batches += 1;
    }
    Moved {
        batches,
        on_source,
        aof_checks,
        pending,
    }
}

fn reshard_scenario() {
    let t0 = Instant::now();
    let nodes = start_cluster(&RANGES);
    eprintln!("cluster up after {:?}", t0.elapsed());
    let slot = RANGES[0].0;
    let tag = tag_for(slot);
    let at = now_s() - 60;
    let (src, dst) = (&nodes[0], &nodes[1]);
    let mut s = src.server.conn();
    let mut d = dst.server.conn();
    let (src_id, dst_id) = (my_id(&mut s), my_id(&mut d));
    let reference = Server::start();
    let mut r = reference.conn();

    let mut work = Workload::new(37, &tag, at);
    let mut client = SlotClient::new(&nodes, 0);
    let mut acked: Acked = Vec::new();
    let lb = work.lb.clone();
    for c in [&mut client.conns[0].1, &mut r] {
        q(c, &["RANK.CREATE", &lb, "PERIODS", "day", "week", "month"]).expect("RANK.CREATE");
    }
    for _ in 0..1500 {
        let op = work.next();
        let v = client.send(&op).expect("no TRYAGAIN before the migration");
        acked.push((op, v));
    }
    assert!(count_in_slot(&mut s, slot) > 800, "a board of many keys");
    // The AOF shows what a command wrote and replicated: a refused one
    // adds nothing to either node's (checked for the first refusals).
    aof_on(&mut s);
    aof_on(&mut d);
    let aof_start = aof_size(&mut s);

    // 1. MIGRATE batches of 50 keys, with writes between them.
    let slot_s = slot.to_string();
    q(
        &mut d,
        &["CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &src_id],
    )
    .expect("IMPORTING");
    q(
        &mut s,
        &["CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &dst_id],
    )
    .expect("MIGRATING");
    let moved = migrate_in_batches(
        &mut s,
        &mut d,
        dst,
        slot,
        &mut work,
        &mut client,
        &mut acked,
        40,
    );
    let (batches, on_source, aof_checks, mut pending) = (
        moved.batches,
        moved.on_source,
        moved.aof_checks,
        moved.pending,
    );
    q(&mut d, &["CLUSTER", "SETSLOT", &slot_s, "NODE", &dst_id]).expect("NODE on target");
    q(&mut s, &["CLUSTER", "SETSLOT", &slot_s, "NODE", &dst_id]).expect("NODE on source");
    assert_eq!(
        count_in_slot(&mut s, slot),
        0,
        "the slot ends empty on the source"
    );
    let refused = client.seen.tryagain;
    for op in pending.drain(..) {
        let v = client
            .send(&op)
            .unwrap_or_else(|| panic!("{}: TRYAGAIN after the migration", show_op(&op)));
        acked.push((op, v));
    }
    assert_eq!(
        client.seen.tryagain, refused,
        "no TRYAGAIN once the slot moved"
    );
    eprintln!(
        "{:?}: MIGRATE: {batches} batches, {} writes acknowledged, {on_source} on the source during the migration, {:?}",
        t0.elapsed(),
        acked.len(),
        client.seen
    );
    assert!(batches >= 16, "{batches} batches");
    assert!(refused > 0 && client.seen.ask > 0 && client.seen.moved > 0);
    let shown = client.seen.tryagain_text.take().expect("a TRYAGAIN");
    assert_eq!(
        doc_line("(error) TRYAGAIN"),
        shown,
        "the page shows the error"
    );
    assert!(on_source > 0, "the source kept writing while it could");
    assert_eq!(aof_checks, 40, "refusals checked against the AOF");
    assert!(
        aof_size(&mut s) > aof_start,
        "the writes the source ran are in its AOF"
    );
    replay(&mut r, &acked);
    assert_same_keys(&mut d, &mut r, slot);

    // 2. `redis-cli --cluster reshard` moves it back (node 1's lowest slot)
    // while a writer keeps writing.
    wait_owner(&nodes, slot, dst.server.port);
    // This time in `commands` mode, where a write replicates as itself.
    for c in [&mut s, &mut d, &mut r] {
        config_set(c, "hotrank.replicate", "commands");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let acked2 = Arc::new(Mutex::new(Acked::new()));
    let writer = {
        let (stop, acked2) = (stop.clone(), acked2.clone());
        let mut client = SlotClient::new(&nodes, 1);
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let op = work.next();
                loop {
                    if let Some(v) = client.send(&op) {
                        acked2.lock().expect("acked").push((op, v));
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            client.seen
        })
    };
    while acked2.lock().expect("acked").len() < 50 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let line = doc_line("redis-cli --cluster reshard ");
    let args: Vec<String> = line
        .split_whitespace()
        .skip(1)
        .map(|w| match w {
            "127.0.0.1:7001" => format!("127.0.0.1:{}", dst.server.port),
            "<source-id>" => dst_id.clone(),
            "<target-id>" => src_id.clone(),
            w => w.to_string(),
        })
        .collect();
    let out = std::process::Command::new("redis-cli")
        .args(&args)
        .output()
        .expect("redis-cli");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "redis-cli --cluster reshard:\n{text}");
    assert!(
        text.contains(&format!("Moving slot {slot} from")) && !text.contains("ERR"),
        "{text}"
    );
    // Writes after the move, then stop.
    let n = acked2.lock().expect("acked").len();
    while acked2.lock().expect("acked").len() < n + 50 {
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::SeqCst);
    let seen = writer.join().expect("writer");
    eprintln!(
        "{:?}: redis-cli reshard: {} writes acknowledged under load, {seen:?}",
        t0.elapsed(),
        acked2.lock().expect("acked").len()
    );
    assert_eq!(
        count_in_slot(&mut d, slot),
        0,
        "the slot ends empty on node 1"
    );
    replay(&mut r, &acked2.lock().expect("acked"));
    assert_same_keys(&mut s, &mut r, slot);
}

#[test]
fn boards_survive_a_reshard() {
    reshard_scenario();
}

/// A board made again after HOT.DROP lives at epoch 1: its epoch-0 record
/// never exists, and only its epoch key tells its epoch. Its slot moves in
/// `MIGRATE` batches while views and increments follow ASK and retry
/// TRYAGAIN: a view whose keys are all on the source runs there (it is not
/// refused because the epoch-0 record is missing), and every acknowledged
/// write counted exactly once (replayed on a standalone server: same
/// replies, same keys).
#[test]
fn dropped_board_survives_a_reshard() {
    let nodes = start_cluster(&RANGES);
    let slot = RANGES[0].0;
    let tag = tag_for(slot);
    let at = now_s() - 60;
    let (src, dst) = (&nodes[0], &nodes[1]);
    let mut s = src.server.conn();
    let mut d = dst.server.conn();
    let (src_id, dst_id) = (my_id(&mut s), my_id(&mut d));
    let reference = Server::start();
    let mut r = reference.conn();
    let mut work = Workload::new(38, &tag, at);
    let mut client = SlotClient::new(&nodes, 0);
    let (hot, lb) = (work.hot.clone(), work.lb.clone());
    for c in [&mut s, &mut r] {
        q(c, &["RANK.CREATE", &lb, "PERIODS", "day"]).expect("RANK.CREATE");
    }
    // A first board, then HOT.DROP: the board written next is at epoch 1.
    let mut acked: Acked = Vec::new();
    for _ in 0..300 {
        let op = work.next();
        let v = client.send(&op).expect("no TRYAGAIN before the migration");
        acked.push((op, v));
    }
    replay(&mut r, &acked);
    acked.clear();
    let ep = format!("{hot}\0ep");
    for c in [&mut s, &mut r] {
        q(c, &["HOT.DROP", &hot]).expect("HOT.DROP");
        // The old article keys go in steps; the last one sets the epoch
        // key's TTL.
        let deadline = Instant::now() + Duration::from_secs(30);
        while redis::cmd("PTTL")
            .arg(ep.as_bytes())
            .query::<i64>(c)
            .expect("PTTL")
            < 0
        {
            assert!(Instant::now() < deadline, "HOT.DROP's steps did not end");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // One pair viewed in the dedup generation before `at` and at `at`: a
    // repeat of its view at `at` needs only keys that exist (a view also
    // reads the previous generation's dedup shard).
    let view = |t: i64| -> Op {
        ["HOT.VIEW", &hot, "a0", "v0", "AT", &t.to_string()]
            .iter()
            .map(|a| a.as_bytes().to_vec())
            .collect()
    };
    let mut ops: Vec<Op> = vec![view(at - 900)];
    ops.extend((0..1500).map(|_| work.next()));
    ops.push(view(at));
    for op in ops {
        let v = client.send(&op).expect("no TRYAGAIN before the migration");
        acked.push((op, v));
    }
    assert!(count_in_slot(&mut s, slot) > 800, "a board of many keys");

    let slot_s = slot.to_string();
    q(
        &mut d,
        &["CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &src_id],
    )
    .expect("IMPORTING");
    q(
        &mut s,
        &["CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &dst_id],
    )
    .expect("MIGRATING");
    // Nothing has moved yet: the repeated view needs only keys that are
    // here, and runs on the source.
    let again = view(at);
    let v = client
        .send(&again)
        .unwrap_or_else(|| panic!("{}: TRYAGAIN with every key here", show_op(&again)));
    acked.push((again, v));
    let moved = migrate_in_batches(
        &mut s,
        &mut d,
        dst,
        slot,
        &mut work,
        &mut client,
        &mut acked,
        0,
    );
    q(&mut d, &["CLUSTER", "SETSLOT", &slot_s, "NODE", &dst_id]).expect("NODE on target");
    q(&mut s, &["CLUSTER", "SETSLOT", &slot_s, "NODE", &dst_id]).expect("NODE on source");
    assert_eq!(
        count_in_slot(&mut s, slot),
        0,
        "the slot ends empty on the source"
    );
    for op in moved.pending {
        let v = client
            .send(&op)
            .unwrap_or_else(|| panic!("{}: TRYAGAIN after the migration", show_op(&op)));
        acked.push((op, v));
    }
    eprintln!(
        "dropped board: {} batches, {} writes acknowledged, {} on the source during the migration, {:?}",
        moved.batches,
        acked.len(),
        moved.on_source,
        client.seen
    );
    assert!(moved.batches >= 16, "{} batches", moved.batches);
    assert!(
        moved.on_source > 0,
        "the source kept writing while it could"
    );
    assert!(client.seen.tryagain > 0 && client.seen.ask > 0);
    replay(&mut r, &acked);
    assert_same_keys(&mut d, &mut r, slot);
}

/// Sends `signal` (`-STOP`, `-CONT`) to the process `pid`.
fn signal(pid: u32, signal: &str) {
    let ok = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok, "kill {signal} {pid}");
}

/// Valkey 8 and later, on a primary with a replica, applies `CLUSTER
/// SETSLOT … MIGRATING` only once the replica acknowledges it, and then
/// without passing module command filters. The replica is stopped so that
/// a board command runs (and may read `CLUSTER NODES`, which does not show
/// the slot yet) while the `SETSLOT` waits. Once the `SETSLOT` has taken
/// effect, a view that needs a key that is not here (a new article) must
/// be refused with TRYAGAIN: the slot is known to move. On Redis 7.0 the
/// `SETSLOT` takes effect at once, and the same must hold.
#[test]
fn slot_start_seen_while_setslot_waits_for_replicas() {
    let nodes = start_cluster(&RANGES);
    let slot = RANGES[0].0;
    let hot = format!("hot:{{{}}}", tag_for(slot));
    let at = now_s().to_string();
    let (src, dst) = (&nodes[0], &nodes[1]);
    let mut s = src.server.conn();
    let mut d = dst.server.conn();
    let (src_id, dst_id) = (my_id(&mut s), my_id(&mut d));
    let (replica, _bus) = common::cluster::start_node(2);
    let mut rc = replica.conn();
    let (port, bus) = (src.server.port.to_string(), src.bus.to_string());
    q(&mut rc, &["CLUSTER", "MEET", "127.0.0.1", &port, &bus]).expect("MEET");
    let deadline = Instant::now() + Duration::from_secs(30);
    while q(&mut rc, &["CLUSTER", "REPLICATE", &src_id]).is_err() {
        assert!(Instant::now() < deadline, "CLUSTER REPLICATE");
        std::thread::sleep(Duration::from_millis(20));
    }
    loop {
        let online = common::cluster::info_field(&mut s, &["INFO", "replication"], "slave0")
            .is_some_and(|v| v.contains("state=online"));
        let known: Vec<Value> = redis::cmd("CLUSTER")
            .arg("REPLICAS")
            .arg(&src_id)
            .query(&mut s)
            .expect("CLUSTER REPLICAS");
        if online && known.len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the replica did not come online");
        std::thread::sleep(Duration::from_millis(20));
    }
    q(&mut s, &["HOT.VIEW", &hot, "a1", "v1", "AT", &at]).expect("a view before the move");
    let slot_s = slot.to_string();
    q(
        &mut d,
        &["CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &src_id],
    )
    .expect("IMPORTING");
    signal(replica.pid(), "-STOP");
    let setslot = {
        let mut c = src.server.conn();
        let (slot_s, dst_id) = (slot_s.clone(), dst_id.clone());
        std::thread::spawn(move || {
            q(
                &mut c,
                &["CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &dst_id],
            )
        })
    };
    // Valkey blocks the SETSLOT until the replica acknowledges it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !setslot.is_finished()
        && common::cluster::info_field(&mut s, &["INFO", "clients"], "blocked_clients").as_deref()
            != Some("1")
    {
        assert!(Instant::now() < deadline, "SETSLOT neither ran nor blocked");
        std::thread::sleep(Duration::from_millis(2));
    }
    // Meanwhile a board command (refused or not: the slot may be known).
    let _ = q(&mut s, &["HOT.VIEW", &hot, "a1", "v1", "AT", &at]);
    signal(replica.pid(), "-CONT");
    setslot
        .join()
        .expect("SETSLOT thread")
        .expect("SETSLOT MIGRATING");
    let e = q(&mut s, &["HOT.VIEW", &hot, "a2", "v2", "AT", &at])
        .expect_err("a view needing a key that is not here, while the slot moves");
    assert_eq!(e.code(), Some("TRYAGAIN"), "{e}");
}

/// `MODULE UNLOAD` then `MODULE LOAD` in one server process: the command
/// filter that follows slot migrations is registered again (the library
/// may still be mapped, its statics kept), and the load succeeds.
#[test]
fn module_loads_again_in_one_process() {
    let server = Server::start_with(&["--enable-module-command", "yes"], true);
    let mut c = server.conn();
    let path = module_path();
    let path = path.to_str().expect("module path");
    for _ in 0..2 {
        q(&mut c, &["MODULE", "UNLOAD", "hotrank"]).expect("MODULE UNLOAD");
        q(&mut c, &["MODULE", "LOAD", path]).expect("MODULE LOAD again");
        let v: Vec<Value> = redis::cmd("HOT.VIEW")
            .arg("hot:{r}")
            .arg("a1")
            .arg("v1")
            .query(&mut c)
            .expect("HOT.VIEW after the reload");
        assert_eq!(v.len(), 4);
    }
}
