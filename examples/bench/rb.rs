//! One redis-benchmark run, and the result every throughput runner reports.

use std::collections::BTreeMap;
use std::env;
use std::fs::File;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::util::info_section;
use crate::{Res, RB_CLIENTS, RB_TIMEOUT_S};

#[derive(Clone, Debug)]
pub struct RunResult {
    pub rps: f64,
    pub p50: f64,
    pub p99: f64,
    /// Server CPU time (user + sys) per operation, µs.
    pub srv_us: f64,
    pub errors: u64,
    /// What the run cost the replica, when one was attached.
    pub replica: Option<ReplicaRun>,
}

/// What one run cost the replica attached to the measured server.
#[derive(Clone, Debug)]
pub struct ReplicaRun {
    /// The replica's CPU time (user + sys) per operation, µs, from the start of the
    /// run until it had applied the whole run.
    pub cpu_us: f64,
    /// Replication bytes the replica had not yet applied when the run ended
    /// (`master_repl_offset` of the master minus the replica's).
    pub lag_bytes: f64,
    /// Time from the end of the run until the replica had applied all of it, s.
    pub catchup_s: f64,
}

/// Means over rounds; of the replica, the mean CPU and the largest lag and catch-up.
pub fn mean_result(rs: &[RunResult]) -> RunResult {
    let n = rs.len().max(1) as f64;
    let reps: Vec<&ReplicaRun> = rs.iter().filter_map(|r| r.replica.as_ref()).collect();
    RunResult {
        rps: rs.iter().map(|r| r.rps).sum::<f64>() / n,
        p50: rs.iter().map(|r| r.p50).sum::<f64>() / n,
        p99: rs.iter().map(|r| r.p99).sum::<f64>() / n,
        srv_us: rs.iter().map(|r| r.srv_us).sum::<f64>() / n,
        errors: rs.iter().map(|r| r.errors).sum(),
        replica: (!reps.is_empty()).then(|| ReplicaRun {
            cpu_us: reps.iter().map(|r| r.cpu_us).sum::<f64>() / reps.len() as f64,
            lag_bytes: reps.iter().map(|r| r.lag_bytes).fold(0.0, f64::max),
            catchup_s: reps.iter().map(|r| r.catchup_s).fold(0.0, f64::max),
        }),
    }
}

/// Server CPU seconds (user + sys) and error replies so far.
pub fn server_counters(con: &mut redis::Connection) -> Res<(f64, f64)> {
    let cpu = info_section(con, "cpu")?;
    let stats = info_section(con, "stats")?;
    let g = |m: &BTreeMap<String, String>, k: &str| -> f64 {
        m.get(k).and_then(|v| v.parse().ok()).unwrap_or(0.0)
    };
    Ok((
        g(&cpu, "used_cpu_user") + g(&cpu, "used_cpu_sys"),
        g(&stats, "total_error_replies"),
    ))
}

/// Runs `bin` against the server: `n` commands `args` from RB_CLIENTS clients at
/// `pipeline`, random numbers below `keyspace` (`-r`); the server's CPU time and
/// error replies are read around the run.
pub fn redis_benchmark(
    bin: &str,
    port: u16,
    con: &mut redis::Connection,
    args: &[String],
    n: u64,
    pipeline: usize,
    keyspace: u64,
) -> Res<RunResult> {
    let (cpu0, err0) = server_counters(con)?;
    let mut cmd = Command::new(bin);
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-c", &RB_CLIENTS.to_string()])
        .args(["-n", &n.to_string()])
        .args(["-P", &pipeline.to_string()])
        .args(["-r", &keyspace.to_string()])
        .args(["--csv", "-e"])
        .args(args);
    let (status, stdout, stderr) = run_with_deadline(bin, cmd, n)?;
    let (cpu1, err1) = server_counters(con)?;
    if !status.success() {
        return Err(format!("{bin} exited with {status}: {}", stderr.trim()));
    }
    let (rps, p50, p99) = parse_csv(bin, &stdout, &stderr)?;
    Ok(RunResult {
        rps,
        p50,
        p99,
        srv_us: (cpu1 - cpu0) * 1e6 / n as f64,
        // The INFO calls themselves never fail; anything counted here came from the run.
        errors: (err1 - err0).max(0.0) as u64,
        replica: None,
    })
}

/// Runs `cmd` with its output in temporary files, killed after RB_TIMEOUT_S so a
/// pathologically slow command cannot stall the bench; returns status, stdout, stderr.
fn run_with_deadline(bin: &str, mut cmd: Command, n: u64) -> Res<(ExitStatus, String, String)> {
    let base = env::temp_dir().join(format!("hotrank-bench-rb-{}", std::process::id()));
    let (out_path, err_path) = (base.with_extension("out"), base.with_extension("err"));
    let out_file = File::create(&out_path)
        .map_err(|e| format!("cannot create {}: {e}", out_path.display()))?;
    let err_file = File::create(&err_path)
        .map_err(|e| format!("cannot create {}: {e}", err_path.display()))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| format!("cannot run {bin}: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(RB_TIMEOUT_S);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_file(&out_path);
                let _ = std::fs::remove_file(&err_path);
                return Err(format!(
                    "{bin} did not finish {n} commands within {RB_TIMEOUT_S} s; killed"
                ));
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for {bin}: {e}")),
        }
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    Ok((status, stdout, stderr))
}

/// rps, p50 and p99 (ms) from redis-benchmark's `--csv` output.
fn parse_csv(bin: &str, stdout: &str, stderr: &str) -> Res<(f64, f64, f64)> {
    if let Some(line) = stdout.lines().find(|l| l.starts_with("Error")) {
        return Err(format!("{bin} reported: {line}"));
    }
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("\"test\""));
    let header = lines
        .next()
        .ok_or_else(|| format!("no CSV header in {bin} output: {stdout:?} {stderr:?}"))?;
    let row = lines
        .next()
        .ok_or_else(|| format!("no CSV row in {bin} output: {stdout:?}"))?;
    let cols = csv_fields(header);
    let vals = csv_fields(row);
    let field = |name: &str| -> Res<f64> {
        let i = cols
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| format!("no column {name:?} in {bin} CSV header {header:?}"))?;
        vals.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| format!("bad {name} in {bin} CSV row {row:?}"))
    };
    Ok((
        field("rps")?,
        field("p50_latency_ms")?,
        field("p99_latency_ms")?,
    ))
}

/// Fields of one CSV line with double-quoted fields.
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}
