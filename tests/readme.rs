//! Every example block of README.md runs, in order, against one fresh server
//! with the module loaded, and each reply must print as the README shows it.
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
//! - **Keep it true.** Blocks run in file order on one server, so give each
//!   example its own keys (or continue an earlier example's story on purpose)
//!   and fix every time that matters with `AT` (HOT.VIEW, HOT.TOP,
//!   HOT.STATS, RANK.INCR/SET take `AT t`; times are unix seconds): a reply
//!   that depends on the server clock cannot be shown.
//! - **Today's period ids.** Where a reply names the current period (RANK.INFO's
//!   `period_boards`), write a placeholder instead of the id: `<day TZ>`,
//!   `<week TZ>` or `<month TZ>` (`TZ` as in RANK.CREATE, e.g. `+02:00`). The
//!   test fills it in from the server's `TIME` (read just before and just after
//!   the command, so a day boundary in between passes either way), so the
//!   example passes on any date.
//!
//! On a mismatch the test prints the README line of the command, the
//! expected and the actual lines.

mod common;
use common::*;
use hotrank::rank::period::{Period, Tz};
use redis::Value;

/// One command of an example block, with the reply lines shown after it.
struct Step {
    /// 1-based line number in README.md.
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

#[test]
fn every_readme_example_prints_what_the_readme_shows() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let text = std::fs::read_to_string(path).expect("README.md");
    let blocks = examples(&text);
    assert!(blocks.len() >= 10, "only {} example blocks", blocks.len());
    let s = Server::start();
    let mut c = s.conn();
    let mut failures = Vec::new();
    let mut checked = 0;
    for steps in &blocks {
        for step in steps {
            let args = split_args(&step.command);
            let before = server_ms(&mut c);
            let actual = format(&run(&mut c, &args));
            if step.expected.is_empty() {
                continue;
            }
            checked += 1;
            let after = server_ms(&mut c);
            let fits = |ms| matches(&fill_periods(&step.expected, ms), &actual);
            if !fits(before) && !fits(after) {
                failures.push(format!(
                    "README.md:{}: > {}\n--- README shows:\n{}\n--- the server says:\n{}\n",
                    step.line,
                    step.command,
                    step.expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    }
    println!("{} example blocks, {checked} replies checked", blocks.len());
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
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
