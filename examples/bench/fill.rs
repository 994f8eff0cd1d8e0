//! Filling boards: HOT.PUBLISH + HOT.VIEW … AT of a data set, and the pipelined,
//! multi-connection sender every bulk job of the bench goes through.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Instant;

use redis::Value;

use crate::data::{article, visitor, Dataset};
use crate::replies::{describe, view_status};
use crate::util::{connect, fmt_ms, progress};
use crate::{Res, BATCH, FILL_THREADS};

pub struct Fill {
    pub publish_s: f64,
    pub views_s: f64,
    pub counted: u64,
    pub duplicate: u64,
}

pub fn fill_board(port: u16, board: &str, ds: &Dataset) -> Res<Fill> {
    progress(&format!(
        "filling {board}: {} HOT.PUBLISH, {} HOT.VIEW",
        ds.pub_ms.len(),
        ds.views.len()
    ));
    let t0 = Instant::now();
    publish_all(port, board, ds)?;
    let publish_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let (counted, duplicate) = view_all(port, board, ds)?;
    Ok(Fill {
        publish_s,
        views_s: t1.elapsed().as_secs_f64(),
        counted,
        duplicate,
    })
}

/// HOT.PUBLISH of every article of `ds` at its publish time.
fn publish_all(port: u16, board: &str, ds: &Dataset) -> Res<()> {
    pipelined(
        port,
        0,
        ds.pub_ms.len(),
        "HOT.PUBLISH",
        &|p, i| {
            p.cmd("HOT.PUBLISH")
                .arg(board)
                .arg(article(i as u32))
                .arg(fmt_ms(ds.pub_ms[i]));
        },
        &|i, v| match v {
            Value::Int(_) => Ok(()),
            other => Err(format!(
                "HOT.PUBLISH {board} {} {}: {}",
                article(i as u32),
                fmt_ms(ds.pub_ms[i]),
                describe(other)
            )),
        },
    )
}

/// HOT.VIEW … AT of every view of `ds`; returns the replies counted and duplicate.
fn view_all(port: u16, board: &str, ds: &Dataset) -> Res<(u64, u64)> {
    let (counted, duplicate) = (AtomicU64::new(0), AtomicU64::new(0));
    pipelined(
        port,
        0,
        ds.views.len(),
        "HOT.VIEW",
        &|p, i| {
            let (t, a, v) = ds.views[i];
            p.cmd("HOT.VIEW")
                .arg(board)
                .arg(article(a))
                .arg(visitor(v))
                .arg("AT")
                .arg(fmt_ms(t));
        },
        &|i, v| {
            let (t, a, vis) = ds.views[i];
            match view_status(v) {
                Ok(s) if s == "counted" => {
                    counted.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }
                Ok(s) if s == "duplicate" => {
                    duplicate.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }
                Ok(s) => Err(format!("unexpected status {s:?}")),
                Err(e) => Err(e),
            }
            .map_err(|e| {
                format!(
                    "HOT.VIEW {board} {} {} AT {}: {e}",
                    article(a),
                    visitor(vis),
                    fmt_ms(t)
                )
            })
        },
    )?;
    Ok((counted.into_inner(), duplicate.into_inner()))
}

pub type Build<'a> = &'a (dyn Fn(&mut redis::Pipeline, usize) + Sync);
pub type Check<'a> = &'a (dyn Fn(usize, &Value) -> Res<()> + Sync);

/// Sends commands `0..total` (built by `build`) in pipelines of BATCH over
/// FILL_THREADS connections to database `db`, and checks every reply.
/// Longest a single `pipelined` job may be projected to take (seconds), so that a
/// pathologically slow module build makes the bench stop with a clear error
/// instead of running for hours. Set from `Cfg` at start.
pub static PIPE_BUDGET_S: AtomicU64 = AtomicU64::new(600);

pub fn pipelined(
    port: u16,
    db: u32,
    total: usize,
    what: &str,
    build: Build,
    check: Check,
) -> Res<()> {
    let job = Job {
        port,
        db,
        total,
        what,
        build,
        check,
        batches: total.div_ceil(BATCH),
        failed: AtomicBool::new(false),
        first_err: Mutex::new(None),
        done: AtomicU64::new(0),
        started: Instant::now(),
        budget: PIPE_BUDGET_S.load(Ordering::Relaxed) as f64,
    };
    thread::scope(|s| {
        for j in 0..FILL_THREADS {
            let job = &job;
            s.spawn(move || {
                if let Err(e) = job.sender(j) {
                    job.failed.store(true, Ordering::Relaxed);
                    if let Ok(mut g) = job.first_err.lock() {
                        g.get_or_insert(e);
                    }
                }
            });
        }
    });
    match job.first_err.into_inner() {
        Ok(Some(e)) => Err(e),
        Ok(None) => Ok(()),
        Err(_) => Err(format!("a {what} sender thread panicked")),
    }
}

/// One [`pipelined`] job, shared by its sender threads.
struct Job<'a> {
    port: u16,
    db: u32,
    total: usize,
    what: &'a str,
    build: Build<'a>,
    check: Check<'a>,
    batches: usize,
    failed: AtomicBool,
    first_err: Mutex<Option<String>>,
    done: AtomicU64,
    started: Instant,
    budget: f64,
}

impl Job<'_> {
    /// Sender `j`: batches j, j + FILL_THREADS, … on its own connection.
    fn sender(&self, j: usize) -> Res<()> {
        let what = self.what;
        let mut con = connect(self.port, self.db)?;
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        let mut b = j;
        while b < self.batches && !self.failed.load(Ordering::Relaxed) {
            pipe.clear();
            let (lo, hi) = (b * BATCH, ((b + 1) * BATCH).min(self.total));
            for i in lo..hi {
                (self.build)(&mut pipe, i);
            }
            let replies: Vec<Value> = pipe
                .query(&mut con)
                .map_err(|e| format!("sending a pipeline of {what}: {e}"))?;
            if replies.len() != hi - lo {
                return Err(format!(
                    "pipeline of {} {what} got {} replies",
                    hi - lo,
                    replies.len()
                ));
            }
            for (k, v) in replies.iter().enumerate() {
                (self.check)(lo + k, v)?;
            }
            self.check_pace(hi - lo)?;
            b += FILL_THREADS;
        }
        Ok(())
    }

    /// Counts `sent` more commands done; an error if the whole job is projected to
    /// take over its budget.
    fn check_pace(&self, sent: usize) -> Res<()> {
        let (what, total, budget) = (self.what, self.total, self.budget);
        let n = self.done.fetch_add(sent as u64, Ordering::Relaxed) + sent as u64;
        let el = self.started.elapsed().as_secs_f64();
        let projected = el * total as f64 / n as f64;
        if el > 15.0 && projected > budget {
            return Err(format!(
                "{what} is far too slow: {n} of {total} commands in {el:.0} s \
                 ({:.0}/s), the whole job would take about {projected:.0} s \
                 (budget {budget:.0} s); aborting the bench",
                n as f64 / el
            ));
        }
        Ok(())
    }
}
