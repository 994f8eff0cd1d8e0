//! One setting's replay: `CONFIG SET` the formula (or `HOT.CREATE … TRENDING-HALF-LIFE`
//! for a trending setting), `HOT.PUBLISH` each article at its first view, every view as
//! `HOT.VIEW … AT t` (pipelined), and `HOT.TOP [BY trending] … LIMIT n AT t` every
//! `step` seconds of log time.

use std::collections::BTreeMap;

use redis::Value;

use super::log::View;
use super::replies::Pipeline;
use super::Setting;

/// Commands sent per pipeline.
const BATCH: usize = 1000;

/// The top at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Query time, unix seconds.
    pub at: i64,
    /// Article ids, best first.
    pub top: Vec<String>,
}

/// The samples of one setting and the statuses of its views.
#[derive(Debug, Clone)]
pub struct Run {
    pub setting: Setting,
    pub board: String,
    pub samples: Vec<Sample>,
    /// `HOT.VIEW` status (`counted`, `duplicate`, `suspicious`) → count.
    pub statuses: BTreeMap<String, u64>,
}

/// The publish time of every article: its first view in `views` (sorted by time),
/// unix seconds. A log has no publish times; this is what `HOT.VIEW` would assume.
pub fn publish_times(views: &[View]) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for v in views {
        out.entry(v.article.clone()).or_insert(v.time);
    }
    out
}

/// The sample instants: every `step` seconds after the first view, up to the last
/// view (unix seconds). Empty when the log spans less than one step.
pub fn sample_times(views: &[View], step: i64) -> Vec<i64> {
    let (Some(first), Some(last)) = (views.first(), views.last()) else {
        return Vec::new();
    };
    (1..)
        .map(|k| first.time + k * step)
        .take_while(|t| *t <= last.time)
        .collect()
}

/// Replays `views` (sorted by time) into a fresh `board` under `setting`, with
/// `HOT.PUBLISH` of each article at its time in `published` (unix seconds) before
/// its first view, and samples the top (`HOT.TOP … LIMIT limit`) at each of
/// `times` (unix seconds, ascending). Every view with a time at or before a
/// sample instant is sent before that sample's `HOT.TOP`, and none after it;
/// views after the last instant are not sent.
pub fn replay(
    con: &mut redis::Connection,
    board: &str,
    setting: Setting,
    views: &[View],
    published: &BTreeMap<String, i64>,
    times: &[i64],
    limit: usize,
) -> Result<Run, String> {
    configure(con, board, setting)?;
    let mut run = Run {
        setting,
        board: board.to_string(),
        samples: Vec::new(),
        statuses: BTreeMap::new(),
    };
    let mut batch = Batch::new(board);
    let mut seen = std::collections::HashSet::new();
    let mut next = 0;
    for &at in times {
        while next < views.len() && views[next].time <= at {
            let v = &views[next];
            if seen.insert(v.article.as_str()) {
                batch.publish(
                    &v.article,
                    published.get(&v.article).copied().unwrap_or(v.time),
                );
            }
            batch.view(v);
            if batch.len() >= BATCH {
                batch.flush(con, &mut run.statuses)?;
            }
            next += 1;
        }
        batch.flush(con, &mut run.statuses)?;
        let top = top_at(con, board, setting, limit, at)?;
        run.samples.push(Sample { at, top });
    }
    Ok(run)
}

/// Deletes `board` with every key derived from it, then sets the formula (hot:
/// `CONFIG SET hotrank.gamma/base`) or creates the board with its half-life
/// (trending: `HOT.CREATE board TRENDING-HALF-LIFE h`).
fn configure(con: &mut redis::Connection, board: &str, s: Setting) -> Result<(), String> {
    // Derived keys are the board name, a zero byte and a suffix; a previous run of
    // the same board on this server would make every view a duplicate.
    let mut pattern = board.as_bytes().to_vec();
    pattern.extend_from_slice(b"\0*");
    let mut keys: Vec<Vec<u8>> = redis::cmd("KEYS")
        .arg(&pattern)
        .query(con)
        .map_err(|e| format!("KEYS {board}\\x00*: {e}"))?;
    keys.push(board.as_bytes().to_vec());
    redis::cmd("DEL")
        .arg(keys)
        .query::<i64>(con)
        .map_err(|e| format!("DEL {board} and its derived keys: {e}"))?;
    match s {
        Setting::Hot { gamma, base } => {
            for (name, value) in [("hotrank.gamma", gamma), ("hotrank.base", base)] {
                redis::cmd("CONFIG")
                    .arg("SET")
                    .arg(name)
                    .arg(value.to_string())
                    .query::<()>(con)
                    .map_err(|e| format!("CONFIG SET {name} {value}: {e}"))?;
            }
        }
        Setting::Trending { half_life_secs } => {
            redis::cmd("HOT.CREATE")
                .arg(board)
                .arg("TRENDING-HALF-LIFE")
                .arg(half_life_secs)
                .query::<()>(con)
                .map_err(|e| {
                    format!("HOT.CREATE {board} TRENDING-HALF-LIFE {half_life_secs}: {e}")
                })?;
        }
    }
    Ok(())
}

/// `HOT.TOP board [BY trending] LIMIT limit AT at`: article ids, best first.
fn top_at(
    con: &mut redis::Connection,
    board: &str,
    setting: Setting,
    limit: usize,
    at: i64,
) -> Result<Vec<String>, String> {
    let mut cmd = redis::cmd("HOT.TOP");
    cmd.arg(board);
    if let Setting::Trending { .. } = setting {
        cmd.arg("BY").arg("trending");
    }
    cmd.arg("LIMIT")
        .arg(limit)
        .arg("AT")
        .arg(at)
        .query(con)
        .map_err(|e| {
            format!(
                "HOT.TOP {board} ({}) LIMIT {limit} AT {at}: {e}",
                setting.label()
            )
        })
}

/// A pipeline of `HOT.PUBLISH` and `HOT.VIEW` commands, with a description of each
/// for error messages.
struct Batch<'a> {
    board: &'a str,
    pipe: Pipeline,
}

impl<'a> Batch<'a> {
    fn new(board: &'a str) -> Self {
        Batch {
            board,
            pipe: Pipeline::new(BATCH),
        }
    }

    fn len(&self) -> usize {
        self.pipe.len()
    }

    /// `HOT.PUBLISH board article at` (`at` in unix seconds).
    fn publish(&mut self, article: &str, at: i64) {
        self.pipe
            .cmd("HOT.PUBLISH", format!("HOT.PUBLISH {article} {at}"))
            .arg(self.board)
            .arg(article)
            .arg(at);
    }

    /// `HOT.VIEW board article visitor AT time`.
    fn view(&mut self, v: &View) {
        let origin = format!(
            "log line {}: HOT.VIEW {} {} AT {}",
            v.line_no, v.article, v.visitor, v.time
        );
        self.pipe
            .cmd("HOT.VIEW", origin)
            .arg(self.board)
            .arg(&v.article)
            .arg(&v.visitor)
            .arg("AT")
            .arg(v.time);
    }

    /// Sends the pipeline; counts view statuses; fails on the first error reply.
    fn flush(
        &mut self,
        con: &mut redis::Connection,
        statuses: &mut BTreeMap<String, u64>,
    ) -> Result<(), String> {
        for (reply, origin) in self.pipe.send(con)? {
            match reply {
                Value::ServerError(e) => return Err(format!("{origin}: {e:?}")),
                Value::Array(items) if items.len() == 4 => {
                    let status = match &items[3] {
                        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                        Value::SimpleString(s) => s.clone(),
                        other => return Err(format!("{origin}: status {other:?}")),
                    };
                    *statuses.entry(status).or_insert(0) += 1;
                }
                Value::Int(_) => {} // HOT.PUBLISH
                other => return Err(format!("{origin}: unexpected reply {other:?}")),
            }
        }
        Ok(())
    }
}
