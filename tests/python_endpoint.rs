//! The Python example service (examples/python/hot_service.py) against a real
//! server with the module: the test starts the service with `--port 0`, reads
//! the port it prints, calls its endpoints over HTTP and checks every JSON
//! reply against HOT.TOP / HOT.STATS / RANK.* read directly with the `redis` crate.
//!
//! python3 and redis-py (>= 5) must be installed (`make deps` installs redis-py);
//! without them the tests fail and say so. `HOTRANK_PYTHON` overrides `python3`.
mod common;
use common::*;

use redis::Value;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

const HOT: &str = "hot:{py}";
const LB: &str = "lb:{py}";

fn python() -> String {
    std::env::var("HOTRANK_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Panics (never skips) unless python3 can import redis-py >= 5.
fn require_python() {
    let probe = "import sys, redis; sys.exit(int(redis.__version__.split('.')[0]) < 5)";
    match Command::new(python()).args(["-c", probe]).output() {
        Err(e) => panic!(
            "cannot run `{}` ({e}): the Python example needs python3 with redis-py >= 5; run `make deps`",
            python()
        ),
        Ok(o) if !o.status.success() => panic!(
            "`{}` cannot import redis-py >= 5; run `make deps` \
             (it runs `python3 -m pip install -r examples/python/requirements.txt`). \
             Python said: {}",
            python(),
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Ok(_) => {}
    }
}

/// The example service, running; killed when dropped.
struct Service {
    child: Child,
    base: String,
    log: Arc<Mutex<String>>,
    http: ureq::Agent,
}

impl Service {
    /// Starts the service on `redis_url` with HOT board `board` and waits for
    /// the port it prints.
    fn start(redis_url: &str, board: &str) -> Service {
        require_python();
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python/hot_service.py");
        let mut child = Command::new(python())
            .arg(&script)
            .args(["--redis-url", redis_url, "--board", board, "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "start {} {}: {e}; run `make deps`",
                    python(),
                    script.display()
                )
            });
        // Drain stderr (one log line per request) so the pipe never fills.
        let log = Arc::new(Mutex::new(String::new()));
        let mut stderr = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next());
            for _ in lines {} // keep draining
        });
        let first = rx.recv_timeout(Duration::from_secs(30));
        let mut svc = Service {
            child,
            base: String::new(),
            log,
            http: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .into(),
        };
        let line = match first {
            Ok(Some(Ok(line))) => line,
            other => {
                let _ = svc.child.kill();
                let _ = svc.child.wait();
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "the service printed no port ({other:?}); its stderr:\n{}",
                    svc.log.lock().unwrap()
                );
            }
        };
        let port: u16 = line
            .strip_prefix("listening on http://127.0.0.1:")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        assert_ne!(port, 0, "--port 0 must print the port it picked");
        svc.base = format!("http://127.0.0.1:{port}");
        svc
    }

    /// `GET path` → (status, JSON body).
    fn get(&self, path: &str) -> (u16, Json) {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .call()
            .unwrap_or_else(|e| panic!("GET {path}: {e}; service log:\n{}", self.log()));
        self.json(resp, path)
    }

    /// `POST path` with `body` → (status, JSON body).
    fn post(&self, path: &str, body: &str) -> (u16, Json) {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/json")
            .send(body)
            .unwrap_or_else(|e| panic!("POST {path}: {e}; service log:\n{}", self.log()));
        self.json(resp, path)
    }

    fn json(&self, mut resp: ureq::http::Response<ureq::Body>, path: &str) -> (u16, Json) {
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let text = resp.body_mut().read_to_string().expect("read body");
        assert_eq!(
            ctype, "application/json",
            "{path}: content type; body {text}"
        );
        let body = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}"));
        (status, body)
    }

    /// Asserts `GET path` is an error with `status` whose message contains `needle`.
    fn get_err(&self, path: &str, status: u16, needle: &str) -> String {
        let (st, body) = self.get(path);
        check_err(path, st, &body, status, needle)
    }

    fn post_err(&self, path: &str, payload: &str, status: u16, needle: &str) -> String {
        let (st, body) = self.post(path, payload);
        check_err(&format!("{path} {payload}"), st, &body, status, needle)
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn check_err(what: &str, got: u16, body: &Json, status: u16, needle: &str) -> String {
    assert_eq!(got, status, "{what}: status; body {body}");
    let msg = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no error message in {body}"));
    assert!(
        msg.contains(needle),
        "{what}: error {msg:?} lacks {needle:?}"
    );
    assert_eq!(body.as_object().map(|o| o.len()), Some(1), "{what}: {body}");
    msg.to_string()
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).expect("utf-8"),
        Value::SimpleString(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

fn array(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        other => panic!("not an array: {other:?}"),
    }
}

/// HOT.TOP read directly: (article, score).
fn hot_top(c: &mut redis::Connection, window: &str, limit: usize, at: i64) -> Vec<(String, f64)> {
    let (l, t) = (limit.to_string(), at.to_string());
    let reply = q(
        c,
        &[
            "HOT.TOP",
            HOT,
            "LIMIT",
            &l,
            "WINDOW",
            window,
            "WITHSCORES",
            "AT",
            &t,
        ],
    )
    .expect("HOT.TOP");
    array(reply)
        .chunks(2)
        .map(|p| (text(&p[0]), text(&p[1]).parse().expect("score")))
        .collect()
}

/// HOT.STATS read directly, as field → value.
fn hot_stats(c: &mut redis::Connection, article: &str, at: Option<i64>) -> HashMap<String, Value> {
    let t = at.map(|t| t.to_string());
    let mut args = vec!["HOT.STATS", HOT, article];
    if let Some(t) = &t {
        args.extend(["AT", t.as_str()]);
    }
    let reply = array(q(c, &args).expect("HOT.STATS"));
    assert!(!reply.is_empty(), "HOT.STATS {article}: nil");
    reply
        .chunks(2)
        .map(|p| (text(&p[0]), p[1].clone()))
        .collect()
}

/// Checks one `/hot` reply against HOT.TOP and HOT.STATS at `at`; returns its articles.
fn check_hot(
    c: &mut redis::Connection,
    body: &Json,
    window: &str,
    limit: usize,
    at: i64,
) -> Vec<String> {
    let rows = body
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {body}"));
    let top = hot_top(c, window, limit, at);
    assert_eq!(
        rows.len(),
        top.len(),
        "window {window} limit {limit}: {body}"
    );
    for (row, (article, score)) in rows.iter().zip(&top) {
        assert_eq!(row["article"], json!(article), "{body}");
        assert_eq!(
            row["score"].as_f64(),
            Some(*score),
            "{article}: exact score"
        );
        let st = hot_stats(c, article, Some(at));
        assert_eq!(row["pv"], json!(int(&st["pv"])), "{article} pv");
        assert_eq!(row["uv"], json!(int(&st["uv"])), "{article} uv");
        // Unix seconds: a JSON integer when whole, else a number with the milliseconds.
        let published = text(&st["published_at"]);
        let expected = match published.parse::<i64>() {
            Ok(whole) => json!(whole),
            Err(_) => json!(published.parse::<f64>().expect("published_at")),
        };
        assert_eq!(row["published_at"], expected, "{article} published_at");
        let stats_score: f64 = text(&st["score"]).parse().expect("score");
        assert_eq!(
            *score, stats_score,
            "{article}: HOT.TOP and HOT.STATS agree at {at}"
        );
        assert_eq!(row.as_object().map(|o| o.len()), Some(5), "{row}");
    }
    let scores: Vec<f64> = rows.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
    rows.iter()
        .map(|r| r["article"].as_str().unwrap().to_string())
        .collect()
}

/// Seeds the HOT board: `(article, age in minutes at t, visitors)`; each
/// visitor views twice, 20 minutes apart (outside the dedup window), so pv = 2·uv.
fn seed_hot(c: &mut redis::Connection, t: i64, articles: &[(&str, i64, usize)]) {
    for (article, age_min, visitors) in articles {
        let published = (t - age_min * 60).to_string();
        q(c, &["HOT.PUBLISH", HOT, article, &published]).expect("HOT.PUBLISH");
        for v in 0..*visitors {
            let visitor = format!("{article}-reader-{v}");
            for at in [t - 40 * 60, t - 20 * 60] {
                let at = at.to_string();
                q(c, &["HOT.VIEW", HOT, article, &visitor, "AT", &at]).expect("HOT.VIEW");
            }
        }
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn hot_endpoint_matches_hot_top_and_stats() {
    let s = Server::start();
    let mut c = s.conn();
    let t = now_s();
    seed_hot(
        &mut c,
        t,
        &[
            ("fresh", 10, 1),
            ("a90m", 90, 3),
            ("a5h", 5 * 60, 6),
            ("a50h", 50 * 60, 25),
            ("a100h", 100 * 60, 40),
            ("a10d", 10 * 24 * 60, 60),
        ],
    );
    // Published but never viewed: not on the board, never listed.
    q(
        &mut c,
        &["HOT.PUBLISH", HOT, "quiet", &(t - 60).to_string()],
    )
    .unwrap();

    // Both reply shapes redis-py may ask for: RESP2 (flat HOT.STATS) and RESP3 (a map).
    for protocol in [2, 3] {
        let svc = Service::start(&format!("{}0?protocol={protocol}", s.url()), HOT);
        let ctx = format!("protocol {protocol}");

        let (st, body) = svc.get(&format!("/hot?range=72h&limit=20&at={t}"));
        assert_eq!(st, 200, "{ctx}: {body}");
        let got = check_hot(&mut c, &body, "259200", 20, t);
        assert_eq!(
            sorted(got.clone()),
            sorted(vec![
                "fresh".into(),
                "a90m".into(),
                "a5h".into(),
                "a50h".into()
            ]),
            "{ctx}: 72h keeps the articles published in the last 72 hours"
        );
        let first = got[0].clone();
        assert_eq!(
            body[0]["pv"],
            json!(2 * body[0]["uv"].as_i64().unwrap()),
            "{body}"
        );

        // The range, in each accepted spelling.
        let (_, week) = svc.get(&format!("/hot?range=7d&at={t}"));
        let week = check_hot(&mut c, &week, "604800", 20, t);
        assert!(week.contains(&"a100h".to_string()) && !week.contains(&"a10d".to_string()));
        assert_eq!(week.len(), 5, "{ctx}: {week:?}");
        let (_, half) = svc.get(&format!("/hot?range=30m&at={t}"));
        assert_eq!(
            check_hot(&mut c, &half, "1800", 20, t),
            vec!["fresh"],
            "{ctx}"
        );
        let (_, secs) = svc.get(&format!("/hot?range=7200&at={t}"));
        let (_, hours) = svc.get(&format!("/hot?range=2h&at={t}"));
        assert_eq!(secs, hours, "{ctx}: 7200 = 2h");
        assert_eq!(
            sorted(check_hot(&mut c, &secs, "7200", 20, t)),
            vec!["a90m", "fresh"],
            "{ctx}"
        );
        let (_, wide) = svc.get(&format!("/hot?range=3650d&at={t}"));
        assert_eq!(
            check_hot(&mut c, &wide, "315360000", 20, t).len(),
            6,
            "{ctx}"
        );

        // The limit.
        let (_, two) = svc.get(&format!("/hot?range=72h&limit=2&at={t}"));
        assert_eq!(
            check_hot(&mut c, &two, "259200", 2, t),
            got[..2].to_vec(),
            "{ctx}"
        );
        let (_, one) = svc.get(&format!("/hot?range=7d&limit=1&at={t}"));
        assert_eq!(
            check_hot(&mut c, &one, "604800", 1, t),
            week[..1].to_vec(),
            "{ctx}"
        );

        // Defaults (range 72h, limit 20) at the server clock: the same articles.
        let (st, now) = svc.get("/hot");
        assert_eq!(st, 200);
        let now_articles: Vec<String> = now
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["article"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            sorted(now_articles.clone()),
            sorted(got.clone()),
            "{ctx}: {now}"
        );
        assert_eq!(now_articles[0], first, "{ctx}: clear leader");

        // Bad input: 400 with a JSON error naming the parameter.
        for bad in ["abc", "0", "0h", "-5h", "72x", "", "1.5h", "h", "36501d"] {
            svc.get_err(&format!("/hot?range={}", enc(bad)), 400, "range");
        }
        for bad in ["0", "10001", "abc", "1.5", "", "-1"] {
            svc.get_err(&format!("/hot?limit={}", enc(bad)), 400, "limit");
        }
        // A bad AT is refused by the module: its message, as a 400.
        let msg = svc.get_err("/hot?at=yesterday", 400, "AT");
        let direct = err(&mut c, &["HOT.TOP", HOT, "AT", "yesterday"]);
        assert!(direct.ends_with(&msg), "{ctx}: {msg:?} vs {direct:?}");

        svc.get_err("/nope", 404, "no route");
        svc.post_err("/hot", "{}", 404, "no route");
    }

    // Another board: empty.
    let empty = Service::start(&s.url(), "hot:{nothing}");
    assert_eq!(empty.get("/hot").1, json!([]));
    // A board key holding another type: the module's WRONGTYPE, as a 400.
    q(&mut c, &["SET", "hot:{str}", "x"]).unwrap();
    let wrong = Service::start(&s.url(), "hot:{str}");
    wrong.get_err("/hot", 400, "WRONGTYPE");
}

#[test]
fn view_and_publish_write_through_the_module() {
    let s = Server::start();
    let mut c = s.conn();
    let svc = Service::start(&s.url(), HOT);
    let t = now_s();
    let published = t - 3600;

    let (st, body) = svc.post(
        "/publish",
        &json!({"article": "p1", "published_at": published}).to_string(),
    );
    assert_eq!((st, body), (200, json!({"new": true})));
    let (_, body) = svc.post(
        "/publish",
        &json!({"article": "p1", "published_at": published.to_string()}).to_string(),
    );
    assert_eq!(body, json!({"new": false}), "a string time works too");

    // A counted view; its score is the one HOT.STATS gives at the view's time.
    let at = t - 60;
    let (st, v) = svc.post(
        "/view",
        &json!({"article": "p1", "visitor": "u1", "at": at}).to_string(),
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (&v["pv"], &v["uv"], &v["status"]),
        (&json!(1), &json!(1), &json!("counted"))
    );
    let stats = hot_stats(&mut c, "p1", Some(at));
    assert_eq!((int(&stats["pv"]), int(&stats["uv"])), (1, 1));
    assert_eq!(text(&stats["published_at"]), published.to_string());
    let score: f64 = text(&stats["score"]).parse().unwrap();
    assert!(score > 0.0);
    assert_eq!(v["score"].as_f64(), Some(score), "{v}");
    let zscore: f64 = text(&q(&mut c, &["ZSCORE", HOT, "p1"]).unwrap())
        .parse()
        .unwrap();
    assert_eq!(
        v["score"].as_f64(),
        Some(zscore),
        "the score written to the board"
    );
    assert_eq!(v.as_object().map(|o| o.len()), Some(4), "{v}");

    // The same visitor 30 s later: a duplicate, nothing counted.
    let (_, v) = svc.post(
        "/view",
        &json!({"article": "p1", "visitor": "u1", "at": t - 30}).to_string(),
    );
    assert_eq!(
        (&v["pv"], &v["uv"], &v["status"]),
        (&json!(1), &json!(1), &json!("duplicate"))
    );
    // Another visitor, at the server clock (no "at").
    let (_, v) = svc.post(
        "/view",
        &json!({"article": "p1", "visitor": "u2"}).to_string(),
    );
    assert_eq!(
        (&v["pv"], &v["uv"], &v["status"]),
        (&json!(2), &json!(2), &json!("counted"))
    );
    let stats = hot_stats(&mut c, "p1", None);
    assert_eq!((int(&stats["pv"]), int(&stats["uv"])), (2, 2));

    // A second article through the service; /hot lists both with the new counts.
    svc.post(
        "/view",
        &json!({"article": "p2", "visitor": "u1"}).to_string(),
    );
    let (_, hot) = svc.get(&format!("/hot?at={}", t + 1));
    assert_eq!(check_hot(&mut c, &hot, "259200", 20, t + 1).len(), 2);
    let p1 = hot
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["article"] == "p1")
        .unwrap();
    assert_eq!((&p1["pv"], &p1["uv"]), (&json!(2), &json!(2)));

    // Bad bodies: 400, and nothing written.
    for (payload, needle) in [
        (json!({"article": "p1"}).to_string(), "visitor"),
        (json!({"visitor": "u9"}).to_string(), "article"),
        (
            json!({"article": 5, "visitor": "u9"}).to_string(),
            "article",
        ),
        (
            json!({"article": "", "visitor": "u9"}).to_string(),
            "article",
        ),
        (
            json!({"article": "p1", "visitor": "u9", "at": true}).to_string(),
            "at",
        ),
        (
            json!({"article": "p1", "visitor": "u9", "at": [1]}).to_string(),
            "at",
        ),
        ("not json".to_string(), "JSON"),
        ("[1, 2]".to_string(), "JSON object"),
        (String::new(), "JSON object"),
    ] {
        svc.post_err("/view", &payload, 400, needle);
    }
    // A view in the future is refused by the module: its message, as a 400.
    let future = (t + 86_400).to_string();
    let msg = svc.post_err(
        "/view",
        &json!({"article": "p1", "visitor": "u9", "at": future}).to_string(),
        400,
        "AT",
    );
    let direct = err(&mut c, &["HOT.VIEW", HOT, "p1", "u9", "AT", &future]);
    assert!(direct.ends_with(&msg), "{msg:?} vs {direct:?}");
    let stats = hot_stats(&mut c, "p1", None);
    assert_eq!(
        (int(&stats["pv"]), int(&stats["uv"])),
        (2, 2),
        "nothing written"
    );

    svc.post_err(
        "/publish",
        &json!({"article": "p3"}).to_string(),
        400,
        "published_at",
    );
    svc.post_err(
        "/publish",
        &json!({"article": "p3", "published_at": "soon"}).to_string(),
        400,
        "published_at",
    );
    svc.get_err("/view", 404, "no route");
}

/// `/leaderboard` rows as (rank, member, score).
fn rows(body: &Json) -> Vec<(i64, String, i64)> {
    body.as_array()
        .unwrap_or_else(|| panic!("not a list: {body}"))
        .iter()
        .map(|r| {
            assert_eq!(r.as_object().map(|o| o.len()), Some(3), "{r}");
            (
                r["rank"].as_i64().unwrap(),
                r["member"].as_str().unwrap().to_string(),
                r["score"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// Checks each row against RANK.RANK and RANK.SCORE read directly.
fn check_ranks(c: &mut redis::Connection, rows: &[(i64, String, i64)]) {
    for (rank, member, score) in rows {
        assert_eq!(
            int(&q(c, &["RANK.RANK", LB, member]).unwrap()),
            *rank,
            "{member}"
        );
        assert_eq!(
            int(&q(c, &["RANK.SCORE", LB, member]).unwrap()),
            *score,
            "{member}"
        );
    }
}

#[test]
fn leaderboard_around_and_range() {
    let s = Server::start();
    let mut c = s.conn();
    let svc = Service::start(&s.url(), HOT);
    // 20 players; p05 and p06 tie (p05 reached the score first); one name needs escaping.
    let odd = "ann & bob/é?";
    let mut players: Vec<(String, i64)> = (0..20)
        .map(|i| (format!("p{i:02}"), 1000 - 10 * i))
        .collect();
    players[6].1 = players[5].1;
    players[12].0 = odd.to_string();
    for (member, score) in &players {
        q(&mut c, &["RANK.SET", LB, member, &score.to_string()]).expect("RANK.SET");
    }
    let lb = format!("/leaderboard/{}", enc(LB));

    // Around a member: RANK.AROUND's rows, ranks and scores.
    let (st, body) = svc.get(&format!("{lb}?around=p10&n=3"));
    assert_eq!(st, 200, "{body}");
    let got = rows(&body);
    let direct: Vec<(i64, String, i64)> =
        array(q(&mut c, &["RANK.AROUND", LB, "p10", "3"]).unwrap())
            .into_iter()
            .map(|r| {
                let r = array(r);
                (int(&r[0]), text(&r[1]), int(&r[2]))
            })
            .collect();
    assert_eq!(got, direct);
    assert_eq!(
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        (7..=13).collect::<Vec<_>>()
    );
    assert_eq!(got[3], (10, "p10".to_string(), 900));
    assert_eq!(got[5].1, odd);
    check_ranks(&mut c, &got);

    // Clamped at the top; n defaults to 5; a member that needs escaping.
    let got = rows(&svc.get(&format!("{lb}?around=p01&n=5")).1);
    assert_eq!(
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        (0..=6).collect::<Vec<_>>()
    );
    assert_eq!(
        (got[5].1.as_str(), got[6].1.as_str()),
        ("p05", "p06"),
        "tie: first reached ranks first"
    );
    assert_eq!(got[5].2, got[6].2);
    check_ranks(&mut c, &got);
    let got = rows(&svc.get(&format!("{lb}?around={}", enc(odd))).1);
    assert_eq!(got.len(), 11);
    assert_eq!(got[5], (12, odd.to_string(), 880));
    check_ranks(&mut c, &got);

    // Ranges, with ZRANGE's indexes; ranks stay absolute.
    let got = rows(&svc.get(&format!("{lb}?start=0&stop=4")).1);
    let direct = array(q(&mut c, &["RANK.RANGE", LB, "0", "4", "WITHSCORES"]).unwrap());
    assert_eq!(got.len(), 5);
    for (i, row) in got.iter().enumerate() {
        assert_eq!(
            (row.0, &row.1, row.2),
            (i as i64, &text(&direct[2 * i]), int(&direct[2 * i + 1]))
        );
    }
    check_ranks(&mut c, &got);
    let got = rows(&svc.get(&format!("{lb}?start=-3&stop=-1")).1);
    assert_eq!(
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![17, 18, 19]
    );
    assert_eq!(got[2].1, "p19");
    check_ranks(&mut c, &got);
    let got = rows(&svc.get(&format!("{lb}?start=15&stop=100")).1);
    assert_eq!(
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        (15..=19).collect::<Vec<_>>()
    );
    check_ranks(&mut c, &got);
    let got = rows(&svc.get(&format!("{lb}?start=-100&stop=1")).1);
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(svc.get(&format!("{lb}?start=50&stop=60")), (200, json!([])));

    // Not found: 404.
    svc.get_err(&format!("{lb}?around=nobody"), 404, "nobody");
    svc.get_err(
        "/leaderboard/lb:%7Bnone%7D?around=p01",
        404,
        "not on leaderboard",
    );
    svc.get_err(
        "/leaderboard/lb:%7Bnone%7D?start=0&stop=9",
        404,
        "does not exist",
    );
    svc.get_err("/leaderboard/", 404, "no route");

    // Bad input: 400.
    for bad in ["abc", "1001", "-1", "1.5"] {
        svc.get_err(&format!("{lb}?around=p01&n={bad}"), 400, "n must");
    }
    svc.get_err(&format!("{lb}?start=x&stop=3"), 400, "start");
    svc.get_err(&format!("{lb}?start=0&stop=y"), 400, "stop");
    svc.get_err(&format!("{lb}?start=0"), 400, "either");
    svc.get_err(&format!("{lb}?around=p01&start=0&stop=3"), 400, "either");
    svc.get_err(&lb, 400, "either");

    // A key that is not a RANK board: the module's error, as a 400.
    seed_hot(&mut c, now_s(), &[("story", 5, 1)]);
    let direct = err(&mut c, &["RANK.AROUND", HOT, "story", "5"]);
    let msg = svc.get_err(&format!("/leaderboard/{}?around=story", enc(HOT)), 400, "");
    assert!(
        !msg.is_empty() && direct.ends_with(&msg),
        "{msg:?} vs {direct:?}"
    );
    let direct = err(&mut c, &["RANK.CARD", HOT]);
    let msg = svc.get_err(
        &format!("/leaderboard/{}?start=0&stop=3", enc(HOT)),
        400,
        "",
    );
    assert!(
        !msg.is_empty() && direct.ends_with(&msg),
        "{msg:?} vs {direct:?}"
    );
}
