//! Small helpers: time formats, configs, connections, INFO, machine facts and latency
//! summaries (reply decoding is in `examples/shared/replies.rs`).

use std::collections::BTreeMap;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::Res;

pub fn progress(msg: &str) {
    eprintln!("[bench] {msg}");
}

pub fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

pub struct Summary {
    pub p50: f64,
    pub p99: f64,
    pub mean: f64,
}

impl Summary {
    pub fn of(v: &[f64]) -> Summary {
        if v.is_empty() {
            return Summary {
                p50: f64::NAN,
                p99: f64::NAN,
                mean: f64::NAN,
            };
        }
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let q = |p: f64| s[((s.len() as f64 * p).ceil() as usize).clamp(1, s.len()) - 1];
        Summary {
            p50: q(0.50),
            p99: q(0.99),
            mean: s.iter().sum::<f64>() / s.len() as f64,
        }
    }
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Unix milliseconds as seconds with 3 decimals.
pub fn fmt_ms(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

/// Unix seconds (integer or up to 3 decimals) to milliseconds, exactly.
pub fn parse_time_ms(s: &str) -> Option<i64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = int.parse().ok()?;
    let mut f = frac.to_string();
    while f.len() < 3 {
        f.push('0');
    }
    let ms: i64 = f.parse().ok()?;
    Some(secs * 1000 + if secs < 0 { -ms } else { ms })
}

/// Sets a config and returns its old value; `None` (nothing set) if the server has
/// no such config (an older module build).
pub fn set_config(con: &mut redis::Connection, name: &str, value: &str) -> Res<Option<String>> {
    let old: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query(con)
        .map_err(|e| format!("CONFIG GET {name}: {e}"))?;
    let Some(old) = old.get(1).cloned() else {
        return Ok(None);
    };
    redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query::<()>(con)
        .map_err(|e| format!("CONFIG SET {name} {value}: {e}"))?;
    Ok(Some(old))
}

pub fn restore_config(con: &mut redis::Connection, name: &str, old: &Option<String>) -> Res<()> {
    if let Some(old) = old {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(old)
            .query::<()>(con)
            .map_err(|e| format!("CONFIG SET {name} {old}: {e}"))?;
    }
    Ok(())
}

pub fn connect(port: u16, db: u32) -> Res<redis::Connection> {
    let url = format!("redis://127.0.0.1:{port}/{db}");
    let client = redis::Client::open(url.as_str()).map_err(|e| format!("bad url {url}: {e}"))?;
    client
        .get_connection_with_timeout(Duration::from_secs(5))
        .map_err(|e| format!("cannot connect to {url}: {e}"))
}

pub fn zcard(con: &mut redis::Connection, key: &str) -> Res<i64> {
    redis::cmd("ZCARD")
        .arg(key)
        .query(con)
        .map_err(|e| format!("ZCARD {key}: {e}"))
}

pub fn info_section(con: &mut redis::Connection, section: &str) -> Res<BTreeMap<String, String>> {
    let text: String = redis::cmd("INFO")
        .arg(section)
        .query(con)
        .map_err(|e| format!("INFO {section}: {e}"))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

pub fn info_num(con: &mut redis::Connection, section: &str, field: &str) -> Res<u64> {
    info_section(con, section)?
        .get(field)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("INFO {section} has no numeric {field}"))
}

/// A field of a module INFO section, whatever its prefix (`hotrank_top_calls`).
pub fn info_suffix(m: &BTreeMap<String, String>, suffix: &str) -> Option<f64> {
    m.iter()
        .find(|(k, _)| k.as_str() == suffix || k.ends_with(&format!("_{suffix}")))
        .and_then(|(_, v)| v.parse().ok())
}

pub fn info_delta(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    suffix: &str,
) -> Option<f64> {
    let find = |m: &BTreeMap<String, String>| {
        m.iter()
            .find(|(k, _)| {
                k.as_str() == suffix
                    || k.ends_with(&format!("_{suffix}")) && !k.ends_with("_per_call")
            })
            .and_then(|(_, v)| v.parse::<f64>().ok())
    };
    Some(find(b)? - find(a)?)
}

/// The first three fields of /proc/loadavg.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

/// nproc, CPU model and total memory, from /proc.
pub fn machine_info() -> Vec<String> {
    let nproc = thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown".to_string(), |(_, v)| v.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or("unknown".to_string(), |kb| {
            format!("{:.1} GiB", kb / 1024.0 / 1024.0)
        });
    vec![
        format!("nproc: {nproc}"),
        format!("CPU: {model}"),
        format!("memory: {mem}"),
        format!("load average at start (1, 5, 15 min): {}", loadavg()),
    ]
}

/// Sets `configs`, returning what to restore.
pub fn set_configs(
    con: &mut redis::Connection,
    configs: &[(&'static str, &'static str)],
) -> Res<Vec<(&'static str, Option<String>)>> {
    let mut saved = Vec::new();
    for (k, v) in configs {
        saved.push((*k, set_config(con, k, v)?));
    }
    Ok(saved)
}

pub fn restore_configs(
    con: &mut redis::Connection,
    saved: &[(&'static str, Option<String>)],
) -> Res<()> {
    for (k, old) in saved.iter().rev() {
        restore_config(con, k, old)?;
    }
    Ok(())
}
