//! Operations: the module's version (MODULE LIST, INFO), the INFO counters
//! (RANK writes, reads and periods rolled; errors by kind), a quiet start
//! (no warning-level line), a clear line when the module is loaded twice,
//! `make run PORT=…`, and HOT.TOP refusing a ZSET that HOT did not make.
//! Bad loadmodule arguments are in tests/config.rs.

mod common;
use common::*;
use redis::Value;
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `INFO hotrank` as field → value (the `hotrank_` prefix removed).
fn info(c: &mut redis::Connection) -> HashMap<String, String> {
    let text: String = redis::cmd("INFO").arg("hotrank").query(c).expect("INFO");
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            (
                k.trim_start_matches("hotrank_").to_string(),
                v.trim().to_string(),
            )
        })
        .collect()
}

fn counter(c: &mut redis::Connection, name: &str) -> i64 {
    info(c)
        .get(name)
        .unwrap_or_else(|| panic!("INFO hotrank has no {name}"))
        .parse()
        .expect("integer")
}

/// The version `MODULE LIST` should show: 1.2.3 → 10203.
fn encoded_version() -> i64 {
    let part = |s: &str| s.parse::<i64>().expect("version part");
    part(env!("CARGO_PKG_VERSION_MAJOR")) * 10_000
        + part(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + part(env!("CARGO_PKG_VERSION_PATCH"))
}

#[test]
fn module_list_and_info_show_the_crate_version() {
    assert_eq!(env!("CARGO_PKG_VERSION"), "0.4.0");
    assert_eq!(encoded_version(), 400);
    let s = Server::start();
    let mut c = s.conn();
    let list: Vec<HashMap<String, Value>> = redis::cmd("MODULE")
        .arg("LIST")
        .query(&mut c)
        .expect("MODULE LIST");
    let ours = list
        .iter()
        .find(|m| {
            matches!(m.get("name"), Some(Value::BulkString(n)) if n == b"hotrank")
                || matches!(m.get("name"), Some(Value::SimpleString(n)) if n == "hotrank")
        })
        .expect("hotrank in MODULE LIST");
    assert_eq!(ours.get("ver"), Some(&Value::Int(encoded_version())));
    assert_eq!(
        info(&mut c).get("version").map(String::as_str),
        Some("0.4.0")
    );
    let text: String = redis::cmd("INFO").arg("hotrank").query(&mut c).unwrap();
    assert!(text.contains("hotrank_version:0.4.0\r\n"), "{text}");
}

#[test]
fn info_counts_rank_writes_reads_and_periods_rolled() {
    let s = Server::start();
    let mut c = s.conn();
    for f in ["rank_writes", "rank_reads", "rank_periods_rolled"] {
        assert_eq!(counter(&mut c, f), 0, "{f}");
    }
    q(&mut c, &words("RANK.CREATE lb:{g} PERIODS day week")).unwrap();
    q(&mut c, &words("RANK.INCR lb:{g} alice 5")).unwrap();
    q(&mut c, &words("RANK.SET lb:{g} bob 7")).unwrap();
    // The first write started the day and the week boards; later ones did not.
    assert_eq!(counter(&mut c, "rank_periods_rolled"), 2);
    q(&mut c, &words("RANK.SCORE lb:{g} alice")).unwrap();
    q(&mut c, &words("RANK.RANGE lb:{g} 0 9")).unwrap();
    q(&mut c, &words("RANK.CARD lb:{g} PERIOD day")).unwrap();
    assert_eq!(counter(&mut c, "rank_writes"), 3);
    assert_eq!(counter(&mut c, "rank_reads"), 3);
    // A refused command counts as an error, not as a read or a write.
    err(&mut c, &words("RANK.INCR lb:{g} alice notanumber"));
    err(&mut c, &words("RANK.SCORE lb:{g}"));
    assert_eq!(counter(&mut c, "rank_writes"), 3);
    assert_eq!(counter(&mut c, "rank_reads"), 3);
    // HOT commands are not RANK's.
    q(&mut c, &words("HOT.TOP hot:{n}")).unwrap();
    assert_eq!(counter(&mut c, "rank_reads"), 3);
    assert_eq!(counter(&mut c, "rank_periods_rolled"), 2);
}

#[test]
fn info_counts_errors_by_kind() {
    let s = Server::start();
    let mut c = s.conn();
    let kinds = [
        "errors_arity",
        "errors_bad_value",
        "errors_wrongtype",
        "errors_noperm",
        "errors_other",
    ];
    let snapshot = |c: &mut redis::Connection| -> Vec<i64> {
        let mut v: Vec<i64> = kinds.iter().map(|k| counter(c, k)).collect();
        v.push(counter(c, "errors"));
        v
    };
    assert_eq!(snapshot(&mut c), vec![0; 6]);
    // arity
    assert!(err(&mut c, &["HOT.VIEW", "hot:{n}"]).contains("wrong number of arguments"));
    assert_eq!(snapshot(&mut c), vec![1, 0, 0, 0, 0, 1]);
    // bad value: a number, an option, a syntax error
    err(&mut c, &words("HOT.TOP hot:{n} LIMIT many"));
    err(&mut c, &words("RANK.INCR lb:{g} alice x"));
    err(&mut c, &words("HOT.TOP hot:{n} FROB"));
    assert_eq!(snapshot(&mut c), vec![1, 3, 0, 0, 0, 4]);
    // WRONGTYPE
    q(&mut c, &words("SET plain x")).unwrap();
    assert!(err(&mut c, &words("RANK.INCR plain alice 1")).starts_with("WRONGTYPE"));
    assert_eq!(snapshot(&mut c), vec![1, 3, 1, 0, 0, 5]);
    // NOPERM: the user may touch the board key but not the keys it derives.
    acl_setuser(&mut c, &["narrow", "on", ">pw", "~hot:{n}", "+@all"]);
    let mut narrow = s.conn_as("narrow", "pw");
    assert!(err(&mut narrow, &words("HOT.VIEW hot:{n} a v")).starts_with("NOPERM"));
    assert_eq!(snapshot(&mut c), vec![1, 3, 1, 1, 0, 6]);
    // other: a ZSET that HOT did not make, a board that already exists
    q(&mut c, &words("ZADD zs 1 m")).unwrap();
    err(&mut c, &words("HOT.VIEW zs a v"));
    q(&mut c, &words("RANK.CREATE lb:{x}")).unwrap();
    assert!(err(&mut c, &words("RANK.CREATE lb:{x}")).contains("already exists"));
    assert_eq!(snapshot(&mut c), vec![1, 3, 1, 1, 2, 8]);
}

/// The server's log lines at warning level (`#` after the time stamp).
fn warnings(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(" # ")).collect()
}

fn temp_log(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "hotrank-info-{tag}-{}-{}.log",
        std::process::id(),
        free_port()
    ))
}

/// Reads `path` until `pred` holds or 5 s pass; returns the last text.
fn read_until(path: &std::path::Path, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if pred(&text) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_normal_start_logs_no_module_warning() {
    let log = temp_log("start");
    let log_arg = log.to_string_lossy().into_owned();
    let s = Server::start_with(&["--logfile", &log_arg], true);
    let text = read_until(&log, |t| t.contains("loaded from"));
    drop(s);
    let _ = std::fs::remove_file(&log);
    assert!(text.contains("Module 'hotrank' loaded"), "{text}");
    let ours: Vec<&str> = warnings(&text)
        .into_iter()
        .filter(|l| l.contains("<hotrank>") || l.to_lowercase().contains("defrag"))
        .collect();
    assert!(ours.is_empty(), "warning-level lines at start: {ours:#?}");
}

#[test]
fn loading_the_module_twice_logs_why_it_fails() {
    // On the command line: the server refuses to start, with a reason.
    let module = module_path().to_string_lossy().into_owned();
    let log = match Server::try_start_with_module_args(&["--loadmodule", &module]) {
        Ok(_) => panic!("a second loadmodule of hotrank started"),
        Err(log) => log,
    };
    assert!(
        log.contains("hotrank is already loaded in this server"),
        "no clear line in:\n{log}"
    );
    // At runtime: MODULE LOAD fails, and the log says why.
    let path = temp_log("twice");
    let log_arg = path.to_string_lossy().into_owned();
    let s = Server::start_with(
        &["--logfile", &log_arg, "--enable-module-command", "yes"],
        true,
    );
    let mut c = s.conn();
    let e = err(&mut c, &["MODULE", "LOAD", &module]);
    assert!(e.starts_with("ERR"), "{e}");
    let text = read_until(&path, |t| t.contains("already loaded"));
    drop(s);
    let _ = std::fs::remove_file(&path);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("hotrank is already loaded in this server"))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
}

#[test]
fn hot_top_refuses_a_zset_hot_did_not_make_as_hot_view_does() {
    let s = Server::start();
    let mut c = s.conn();
    q(&mut c, &words("ZADD plain 1 a 2 b")).unwrap();
    let view = err(&mut c, &words("HOT.VIEW plain a v"));
    let top = err(&mut c, &words("HOT.TOP plain"));
    assert_eq!(top, view);
    assert!(top.starts_with("ERR board identity missing:"), "{top}");
    // A RANK board too.
    q(&mut c, &words("RANK.INCR lb:{r} alice 3")).unwrap();
    assert_eq!(
        err(&mut c, &words("HOT.TOP lb:{r} LIMIT 5")),
        err(&mut c, &words("HOT.VIEW lb:{r} a v"))
    );
    // Nothing changed.
    let members: Vec<String> = redis::cmd("ZRANGE")
        .arg("plain")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    assert_eq!(members, vec!["a", "b"]);
    // A real board, and a missing key, still answer.
    q(&mut c, &words("HOT.VIEW hot:{ok} a v")).unwrap();
    let top: Vec<String> = redis::cmd("HOT.TOP").arg("hot:{ok}").query(&mut c).unwrap();
    assert_eq!(top, vec!["a"]);
    let none: Vec<String> = redis::cmd("HOT.TOP").arg("missing").query(&mut c).unwrap();
    assert!(none.is_empty());
}

#[test]
fn make_run_takes_a_port() {
    let port = free_port();
    let root = env!("CARGO_MANIFEST_DIR");
    let mut child = Command::new("make")
        .args(["--no-print-directory", "run"])
        .arg(format!("PORT={port}"))
        .arg(format!("REDIS_SERVER={}", server_bin()))
        .arg(format!("MODULE={}", module_path().display()))
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("make run");
    let url = format!("redis://127.0.0.1:{port}/");
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut conn = loop {
        if let Ok(mut c) = redis::Client::open(url.as_str()).and_then(|c| c.get_connection()) {
            if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                break c;
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("make run PORT={port} exited ({status}) without serving");
        }
        assert!(Instant::now() < deadline, "make run PORT={port}: no server");
        std::thread::sleep(Duration::from_millis(100));
    };
    let v: (i64, i64, String, String) = redis::cmd("HOT.VIEW")
        .arg("hot:{run}")
        .arg("a")
        .arg("v")
        .query(&mut conn)
        .expect("HOT.VIEW on the make run server");
    assert_eq!(v.3, "counted");
    let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").arg("NOSAVE").query(&mut conn);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("make run did not exit after SHUTDOWN");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
