//! `COMMAND DOCS` of every `HOT.*` and `RANK.*` command, against a real
//! server, checked both ways against the parsers:
//!
//! - every command has docs: summary, since, complexity, group `module`,
//!   module `hotrank`, and an argument tree whose first argument is the
//!   board key (key spec 0), or no key at all for a keyless command
//!   (HOT.BOARDS, RANK.BOARDS);
//! - docs → parser: invocations generated from the served argument tree
//!   (the required arguments alone, each optional argument and each `oneof`
//!   branch in turn, everything at once with repeatable arguments twice)
//!   all succeed, and dropping the last word of the shortest one fails;
//! - parser → docs: the keywords each parser matches, read from the source
//!   of `src/commands/*.rs` and `src/rank/*.rs`, are exactly the tokens of
//!   that command's docs; and each documented keyword of the module, given
//!   to a command that does not document it, is refused with a syntax or
//!   arity error.

mod common;
use common::*;
use redis::{Connection, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Every command of the module (the `redis_module!` list in `src/lib.rs`).
const COMMANDS: [&str; 28] = [
    "hot.publish",
    "hot.view",
    "hot.top",
    "hot.create",
    "hot.alter",
    "hot.stats",
    "rank.create",
    "rank.incr",
    "rank.set",
    "rank.score",
    "rank.rank",
    "rank.range",
    "rank.rem",
    "rank.card",
    "rank.around",
    "rank.rangebyscore",
    "rank.mincr",
    "rank.drop",
    "rank.count",
    // Board lifecycle (issue 22).
    "hot.rem",
    "hot.export",
    "hot.info",
    "hot.drop",
    "rank.info",
    // Listing a node's boards (issue 22): keyless.
    "hot.boards",
    "rank.boards",
    // Boards under memory pressure (issue 36).
    "hot.repair",
    "rank.repair",
];

/// The keyless commands: no board key, no key spec (as SCAN).
const KEYLESS: [&str; 2] = ["hot.boards", "rank.boards"];

/// Which commands each parser function (the one enclosing a keyword match
/// in the source) serves. A keyword match in a function not listed here
/// fails the test: map it first.
const PARSER_FNS: [(&str, &[&str]); 17] = [
    ("top_impl", &["hot.top"]),
    ("export_impl", &["hot.export"]),
    ("list_boards", &["hot.boards", "rank.boards"]),
    // RANK.REPAIR takes RANK.CREATE's options.
    ("create_layout", &["rank.create", "rank.repair"]),
    ("parse_resolution", &["rank.create", "rank.repair"]),
    ("parse_order", &["rank.create", "rank.repair"]),
    // The trailing `AT t` of HOT.VIEW, HOT.STATS and RANK.INCR.
    ("trailing_at", &["hot.view", "hot.stats", "rank.incr"]),
    ("set_options", &["rank.set"]),
    ("score_impl", &["rank.score"]),
    ("rank_impl", &["rank.rank"]),
    ("range_impl", &["rank.range"]),
    ("count_impl", &["rank.count"]),
    ("byscore_options", &["rank.rangebyscore"]),
    // PERIOD of every read but RANGEBYSCORE (which has its own options).
    (
        "read_options",
        &[
            "rank.score",
            "rank.rank",
            "rank.range",
            "rank.card",
            "rank.around",
        ],
    ),
    // The reads' `PERIOD … [AGO n]`.
    ("period_opt", RANK_READS),
    // Period names: RANK.CREATE's (and RANK.REPAIR's) PERIODS and the
    // reads' PERIOD.
    ("parse_period", PARSE_PERIOD_COMMANDS),
    // Score bounds (`-inf`, `+inf`): values, not keywords; see
    // `bounds_are_documented`.
    ("score_bound", &[]),
];

/// The commands that take period names: [`PERIOD_COMMANDS`] and RANK.REPAIR.
const PARSE_PERIOD_COMMANDS: &[&str] = &[
    "rank.create",
    "rank.repair",
    "rank.score",
    "rank.rank",
    "rank.range",
    "rank.card",
    "rank.around",
    "rank.rangebyscore",
    "rank.count",
];

/// The module's version in which every command first appeared.
const SINCE: &str = "0.1.0";

// ---------------------------------------------------------------------------
// The served docs, parsed
// ---------------------------------------------------------------------------

/// One argument as `COMMAND DOCS` serves it.
#[derive(Debug, Clone)]
struct Arg {
    name: String,
    kind: String,
    token: Option<String>,
    summary: Option<String>,
    key_spec_index: Option<i64>,
    optional: bool,
    multiple: bool,
    args: Vec<Arg>,
}

/// One command's docs.
#[derive(Debug, Clone)]
struct Doc {
    fields: BTreeMap<String, Value>,
    args: Vec<Arg>,
}

impl Doc {
    fn text(&self, field: &str) -> Option<String> {
        self.fields.get(field).map(text)
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::VerbatimString { text, .. } => text.clone(),
        Value::Okay => "OK".into(),
        Value::Int(i) => i.to_string(),
        other => panic!("expected a string, got {other:?}"),
    }
}

fn items(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) | Value::Set(a) => a.clone(),
        other => panic!("expected an array, got {other:?}"),
    }
}

/// A map reply (RESP3) or a flat field/value array (RESP2).
fn pairs(v: &Value) -> Vec<(String, Value)> {
    match v {
        Value::Map(m) => m.iter().map(|(k, v)| (text(k), v.clone())).collect(),
        Value::Array(a) => {
            assert!(a.len() % 2 == 0, "odd field/value array: {a:?}");
            a.chunks(2).map(|p| (text(&p[0]), p[1].clone())).collect()
        }
        other => panic!("expected a map, got {other:?}"),
    }
}

fn parse_arg(v: &Value) -> Arg {
    let f: BTreeMap<String, Value> = pairs(v).into_iter().collect();
    let flags: Vec<String> = f
        .get("flags")
        .map(|v| items(v).iter().map(text).collect())
        .unwrap_or_default();
    Arg {
        name: text(&f["name"]),
        kind: text(&f["type"]),
        token: f.get("token").map(text),
        summary: f.get("summary").map(text),
        key_spec_index: f.get("key_spec_index").map(|v| match v {
            Value::Int(i) => *i,
            other => panic!("key_spec_index: {other:?}"),
        }),
        optional: flags.iter().any(|x| x == "optional"),
        multiple: flags.iter().any(|x| x == "multiple"),
        args: f
            .get("arguments")
            .map(|v| items(v).iter().map(parse_arg).collect())
            .unwrap_or_default(),
    }
}

/// The commands the module registered (`COMMAND LIST FILTERBY MODULE hotrank`).
fn module_commands(c: &mut Connection) -> Vec<String> {
    redis::cmd("COMMAND")
        .arg("LIST")
        .arg("FILTERBY")
        .arg("MODULE")
        .arg("hotrank")
        .query(c)
        .expect("COMMAND LIST")
}

/// `COMMAND DOCS` of the given commands, by name.
fn command_docs(c: &mut Connection, names: &[&str]) -> BTreeMap<String, Doc> {
    let mut cmd = redis::cmd("COMMAND");
    cmd.arg("DOCS");
    for n in names {
        cmd.arg(*n);
    }
    let reply: Value = cmd.query(c).expect("COMMAND DOCS");
    pairs(&reply)
        .into_iter()
        .map(|(name, v)| {
            let fields: BTreeMap<String, Value> = pairs(&v).into_iter().collect();
            let args = fields
                .get("arguments")
                .map(|a| items(a).iter().map(parse_arg).collect())
                .unwrap_or_default();
            (name, Doc { fields, args })
        })
        .collect()
}

fn walk<'a>(args: &'a [Arg], out: &mut Vec<&'a Arg>) {
    for a in args {
        out.push(a);
        walk(&a.args, out);
    }
}

/// Every token of a command's docs, uppercased.
fn doc_tokens(d: &Doc) -> BTreeSet<String> {
    let mut all = Vec::new();
    walk(&d.args, &mut all);
    all.iter()
        .filter_map(|a| a.token.as_ref())
        .map(|t| t.to_ascii_uppercase())
        .collect()
}

// ---------------------------------------------------------------------------
// Invocations generated from the docs
// ---------------------------------------------------------------------------

/// Which optional parts an invocation includes.
#[derive(Clone, Debug)]
enum Mode {
    /// Required arguments only; the first branch of a `oneof`.
    Minimal,
    /// The optional argument at this path (and its ancestors), taking
    /// branch `.1` of the `oneof` at that path.
    Include(Vec<usize>, usize),
    /// Every optional argument; repeatable arguments twice.
    All,
}

/// A fresh key per invocation, so no two share a board.
fn fresh_key(n: &mut u32) -> String {
    *n += 1;
    format!("docs:{{t}}:{n}")
}

/// A valid value for an argument, chosen by its type and name.
fn value(a: &Arg, keys: &mut u32) -> String {
    match (a.kind.as_str(), a.name.as_str()) {
        ("key", _) => fresh_key(keys),
        ("unix-time", _) => "1700000000.5".into(),
        ("integer", "min") => "-100".into(),
        ("integer", "max") => "100".into(),
        ("integer", "retention") => "3600".into(),
        ("string", "alpha" | "beta" | "base" | "gamma") => "1.5".into(),
        ("integer", _) => "1".into(),
        ("string", "min") => "-inf".into(),
        ("string", "max") => "+inf".into(),
        ("string", "duration") => "72h".into(),
        ("string", "offset") => "+05:30".into(),
        ("string", _) => "x".into(),
        (kind, name) => panic!("no value for {name} of type {kind}"),
    }
}

fn render(args: &[Arg], path: &[usize], mode: &Mode, keys: &mut u32, out: &mut Vec<String>) {
    for (i, a) in args.iter().enumerate() {
        let p: Vec<usize> = path.iter().copied().chain([i]).collect();
        render_arg(a, &p, false, mode, keys, out);
    }
}

/// Renders argument `a` at path `p`; `chosen`: a `oneof` branch, included
/// whatever its flags say.
fn render_arg(
    a: &Arg,
    p: &[usize],
    chosen: bool,
    mode: &Mode,
    keys: &mut u32,
    out: &mut Vec<String>,
) {
    let included = chosen
        || match mode {
            Mode::Minimal => !a.optional,
            Mode::All => true,
            Mode::Include(target, _) => !a.optional || target.starts_with(p),
        };
    if !included {
        return;
    }
    let times = if a.multiple && matches!(mode, Mode::All) {
        2
    } else {
        1
    };
    for _ in 0..times {
        if let Some(t) = &a.token {
            out.push(t.clone());
        }
        match a.kind.as_str() {
            "pure-token" => {}
            "oneof" => {
                let b = match mode {
                    Mode::Include(target, b) if target == p => *b,
                    _ => 0,
                };
                let bp: Vec<usize> = p.iter().copied().chain([b]).collect();
                render_arg(&a.args[b], &bp, true, mode, keys, out);
            }
            "block" => render(&a.args, p, mode, keys, out),
            _ => out.push(value(a, keys)),
        }
    }
}

/// The modes to try for a command: minimal, all, each optional argument
/// and each branch of each `oneof`.
fn modes(args: &[Arg], path: &[usize], out: &mut Vec<Mode>) {
    for (i, a) in args.iter().enumerate() {
        let p: Vec<usize> = path.iter().copied().chain([i]).collect();
        if a.kind == "oneof" {
            for b in 0..a.args.len() {
                out.push(Mode::Include(p.clone(), b));
            }
        } else if a.optional {
            out.push(Mode::Include(p.clone(), 0));
        }
        if a.kind == "block" {
            modes(&a.args, &p, out);
        }
    }
}

fn invocations(name: &str, d: &Doc, keys: &mut u32) -> Vec<Vec<String>> {
    let mut all = vec![Mode::Minimal, Mode::All];
    modes(&d.args, &[], &mut all);
    all.iter()
        .map(|m| {
            let mut words = vec![name.to_string()];
            render(&d.args, &[], m, keys, &mut words);
            words
        })
        .collect()
}

fn run(c: &mut Connection, words: &[String]) -> Result<Value, String> {
    let args: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    q(c, &args).map_err(|e| format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or("")))
}

// ---------------------------------------------------------------------------
// The keywords the parsers match, read from their source
// ---------------------------------------------------------------------------

/// (enclosing function, keyword) for each keyword match in the parsers:
/// `eq_ignore_ascii_case(b"KW")` and match arms `b"KW" =>` / `b"KW" |`.
fn source_keywords() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    // Every source file of the glue and of the RANK core.
    let mut files: Vec<String> = Vec::new();
    for dir in ["commands", "rank"] {
        for e in std::fs::read_dir(root.join(dir)).expect("read src dir") {
            let name = e
                .expect("dir entry")
                .file_name()
                .into_string()
                .expect("utf-8");
            if name.ends_with(".rs") {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let src =
            std::fs::read_to_string(root.join(&f)).unwrap_or_else(|e| panic!("read {f}: {e}"));
        let mut current = String::new();
        for line in src.lines() {
            if let Some(name) = fn_name(line) {
                current = name;
            }
            for kw in keywords_in(line) {
                out.push((current.clone(), kw));
            }
        }
    }
    assert!(
        out.len() >= 15,
        "the source scan found too few keywords: {out:?}"
    );
    out
}

/// The name of the function a line declares.
fn fn_name(line: &str) -> Option<String> {
    let mut t = line.trim_start();
    // Qualifiers that may come before `fn`.
    while let Some(rest) = [
        "pub ",
        "pub(crate) ",
        "pub(super) ",
        "const ",
        "unsafe ",
        "async ",
    ]
    .iter()
    .find_map(|q| t.strip_prefix(q))
    {
        t = rest;
    }
    let t = t.strip_prefix("fn ")?;
    Some(
        t.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect(),
    )
}

/// The byte-string literals a line matches a keyword against.
fn keywords_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("b\"") {
        let lit = &rest[i + 2..];
        let Some(end) = lit.find('"') else { break };
        let (word, after) = (&lit[..end], lit[end + 1..].trim_start());
        let before = &rest[..i];
        // A RANK read's flag is handed to its option parser.
        if before.ends_with("eq_ignore_ascii_case(")
            || before.ends_with("read_options(&mut args, Some(")
            || after.starts_with("=>")
            || after.starts_with('|')
        {
            out.push(word.to_string());
        }
        rest = &lit[end + 1..];
    }
    out
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn every_command_is_documented() {
    let s = Server::start();
    let mut c = s.conn();
    let listed: BTreeSet<String> = module_commands(&mut c).into_iter().collect();
    let want: BTreeSet<String> = COMMANDS.iter().map(|s| s.to_string()).collect();
    assert_eq!(listed, want, "the module's commands");

    let docs = command_docs(&mut c, &COMMANDS);
    assert_eq!(docs.keys().cloned().collect::<BTreeSet<_>>(), want);
    for (name, d) in &docs {
        let summary = d.text("summary").unwrap_or_default();
        assert!(summary.len() >= 20, "{name}: summary {summary:?}");
        assert_eq!(d.text("since").as_deref(), Some(SINCE), "{name}: since");
        let complexity = d.text("complexity").unwrap_or_default();
        assert!(
            complexity.starts_with("O("),
            "{name}: complexity {complexity:?}"
        );
        assert_eq!(d.text("group").as_deref(), Some("module"), "{name}: group");
        assert_eq!(
            d.text("module").as_deref(),
            Some("hotrank"),
            "{name}: module"
        );
        assert!(!d.args.is_empty(), "{name}: no arguments");
        let first = &d.args[0];
        let mut all = Vec::new();
        walk(&d.args, &mut all);
        if KEYLESS.contains(&name.as_str()) {
            assert!(
                all.iter()
                    .all(|a| a.kind != "key" && a.key_spec_index.is_none()),
                "{name}: keyless"
            );
        } else {
            assert_eq!(
                (first.kind.as_str(), first.key_spec_index),
                ("key", Some(0)),
                "{name}: the board key"
            );
        }
        for a in all {
            assert!(!a.name.is_empty(), "{name}: an argument without a name");
            let grouped = a.kind == "oneof" || a.kind == "block";
            assert_eq!(
                grouped,
                !a.args.is_empty(),
                "{name}: {} ({})",
                a.name,
                a.kind
            );
            if a.kind == "pure-token" {
                assert!(a.token.is_some(), "{name}: {} has no token", a.name);
            }
            if a.kind != "key" {
                assert_eq!(a.key_spec_index, None, "{name}: {}", a.name);
            }
        }
    }
}

/// Makes the board of a generated HOT.REPAIR / RANK.REPAIR invocation
/// `words`: created with the same options (HOT.CREATE / RANK.CREATE), one
/// write, then its record or layout deleted, as eviction would.
fn damage_board(c: &mut Connection, name: &str, words: &[String]) {
    let key = words[1].clone();
    let (create, write, identity) = if name == "hot.repair" {
        ("HOT.CREATE", vec!["HOT.VIEW", &key, "a", "v"], "board")
    } else {
        ("RANK.CREATE", vec!["RANK.INCR", &key, "m", "1"], "layout")
    };
    let mut made = vec![create.to_string()];
    made.extend(words[1..].iter().cloned());
    run(c, &made).expect(create);
    let write: Vec<String> = write.iter().map(|s| s.to_string()).collect();
    run(c, &write).expect("a write");
    run(c, &["DEL".to_string(), format!("{key}\0{identity}")]).expect("DEL");
}

#[test]
fn generated_invocations_are_accepted() {
    let s = Server::start();
    let mut c = s.conn();
    let docs = command_docs(&mut c, &COMMANDS);
    let mut keys = 0u32;
    let mut tried = 0;
    for (name, d) in &docs {
        let all = invocations(name, d, &mut keys);
        for words in &all {
            tried += 1;
            if name == "hot.alter" {
                // HOT.ALTER changes a board that exists.
                run(&mut c, &["HOT.CREATE".to_string(), words[1].clone()]).expect("HOT.CREATE");
            }
            if name == "hot.repair" || name == "rank.repair" {
                // REPAIR rebuilds the identity of a board that lost it: the
                // same board made with the same options, written, then its
                // record or layout deleted.
                damage_board(&mut c, name, words);
            }
            if let Err(e) = run(&mut c, words) {
                panic!("{words:?}, generated from the docs of {name}, is refused: {e}");
            }
        }
        // The shortest invocation is the shortest accepted: without its last word it fails.
        let mut short = all[0].clone();
        short.pop();
        assert!(
            run(&mut c, &short).is_err(),
            "{short:?} is accepted: the docs ask for more than {name} needs"
        );
    }
    // 15 minimal + 15 full + one per optional argument or oneof branch
    // (17 today).
    assert!(tried >= 45, "only {tried} invocations generated");
}

#[test]
fn parser_keywords_match_the_documented_tokens() {
    let s = Server::start();
    let mut c = s.conn();
    let docs = command_docs(&mut c, &COMMANDS);
    let fns: BTreeMap<&str, &[&str]> = PARSER_FNS.iter().copied().collect();
    let mut from_source: BTreeMap<String, BTreeSet<String>> = COMMANDS
        .iter()
        .map(|c| (c.to_string(), BTreeSet::new()))
        .collect();
    for (f, kw) in source_keywords() {
        // `CLOCK c` is taken only from the master or the AOF (the writes
        // replicated in `commands` mode), never documented.
        if kw == "CLOCK" {
            continue;
        }
        let Some(cmds) = fns.get(f.as_str()) else {
            panic!(
                "keyword {kw:?} is matched in fn {f}, which PARSER_FNS does not map to commands"
            );
        };
        for cmd in *cmds {
            from_source
                .get_mut(*cmd)
                .expect("a command")
                .insert(kw.to_ascii_uppercase());
        }
    }
    // HOT.CREATE, HOT.ALTER and HOT.REPAIR take the setting names of
    // src/hot/settings.rs (matched there by name, not by keyword).
    for cmd in ["hot.create", "hot.alter", "hot.repair"] {
        from_source.get_mut(cmd).expect("a command").extend(
            [
                "ALPHA",
                "BETA",
                "BASE",
                "GAMMA",
                "DEDUP-SECONDS",
                "DEDUP-SHARDS",
                "VISITOR-MAX-VIEWS",
                "VISITOR-WINDOW-SECONDS",
                "MAX-ARTICLES",
                "RETENTION-SECONDS",
                "TRENDING-HALF-LIFE",
            ]
            .map(String::from),
        );
    }
    for (name, d) in &docs {
        assert_eq!(
            doc_tokens(d),
            from_source[name],
            "{name}: documented tokens vs keywords its parser matches"
        );
    }
}

#[test]
fn bounds_are_documented() {
    let s = Server::start();
    let mut c = s.conn();
    let docs = command_docs(&mut c, &["rank.rangebyscore"]);
    let values: Vec<String> = source_keywords()
        .into_iter()
        .filter(|(f, _)| f == "score_bound")
        .map(|(_, v)| v)
        .collect();
    assert!(
        !values.is_empty(),
        "score_bound matches no value: update this test"
    );
    for bound in ["min", "max"] {
        let a = docs["rank.rangebyscore"]
            .args
            .iter()
            .find(|a| a.name == bound)
            .expect("bound");
        let summary = a.summary.clone().unwrap_or_default();
        for v in &values {
            assert!(
                summary.contains(v.as_str()),
                "{bound}: {summary:?} does not mention {v}"
            );
        }
    }
}

#[test]
fn undocumented_keywords_are_refused() {
    let s = Server::start();
    let mut c = s.conn();
    let docs = command_docs(&mut c, &COMMANDS);
    let mut keys = 0u32;
    // Each documented keyword of the module with a valid value, as the
    // first command that documents it takes it.
    let mut words: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in docs.values() {
        let mut all = Vec::new();
        walk(&d.args, &mut all);
        for a in all.into_iter().filter(|a| a.token.is_some()) {
            let mut w = Vec::new();
            let a = Arg {
                optional: false,
                ..a.clone()
            };
            render(
                std::slice::from_ref(&a),
                &[],
                &Mode::Minimal,
                &mut keys,
                &mut w,
            );
            let token = a.token.as_deref().unwrap_or_default().to_ascii_uppercase();
            words.entry(token).or_insert(w);
        }
    }
    assert!(words.len() >= 10, "{words:?}");
    let mut refused = 0;
    for (name, d) in &docs {
        // A repeatable last argument takes any word: nothing to refuse.
        if d.args.last().is_some_and(|a| a.multiple) {
            continue;
        }
        let own = doc_tokens(d);
        for (kw, w) in &words {
            if own.contains(kw) {
                continue;
            }
            let mut inv = invocations(name, d, &mut keys).swap_remove(0);
            inv.extend(w.iter().cloned());
            match run(&mut c, &inv) {
                Ok(v) => panic!("{inv:?} is accepted, but the docs of {name} have no {kw}: {v:?}"),
                Err(e) => assert!(
                    e.contains("syntax error") || e.contains("wrong number of arguments"),
                    "{inv:?}: {e}"
                ),
            }
            refused += 1;
        }
    }
    assert!(refused >= 50, "only {refused} refusals checked");
}

// ---------------------------------------------------------------------------
// docs/commands/<command>.md agree with COMMAND DOCS
// ---------------------------------------------------------------------------

/// The syntax of `a` as docs/commands pages write it (redis.io's style):
/// `TOKEN value`, a bare keyword for a pure token, `<a | b>` for a
/// required choice, `[…]` around an optional part, `x [x ...]` for a
/// repeatable one.
fn syntax_of(a: &Arg) -> String {
    let mut inner = match a.kind.as_str() {
        "pure-token" => a.token.clone().unwrap_or_default(),
        "oneof" => a.args.iter().map(syntax_of).collect::<Vec<_>>().join(" | "),
        "block" => a.args.iter().map(syntax_of).collect::<Vec<_>>().join(" "),
        _ => a.name.clone(),
    };
    if a.kind == "oneof" && (!a.optional || a.token.is_some()) {
        inner = format!("<{inner}>");
    }
    if let (Some(t), false) = (&a.token, a.kind == "pure-token") {
        inner = format!("{t} {inner}");
    }
    if a.multiple {
        inner = format!("{inner} [{inner} ...]");
    }
    if a.optional {
        inner = format!("[{inner}]");
    }
    inner
}

/// The one-line syntax of a command, from its served docs.
fn command_syntax(name: &str, d: &Doc) -> String {
    std::iter::once(name.to_ascii_uppercase())
        .chain(d.args.iter().map(syntax_of))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a command page states in its header (see docs/commands/index.md).
#[derive(Debug, Default)]
struct Page {
    title: String,
    syntax: String,
    since: String,
    complexity: String,
    acl: Vec<String>,
    sections: Vec<String>,
}

fn read_page(path: &std::path::Path) -> Page {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut page = Page::default();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        let field = |label: &str| {
            l.strip_prefix(label)
                .map(|v| v.trim_end().trim_end_matches('\\').trim().to_string())
        };
        if let Some(t) = l.strip_prefix("# ") {
            page.title = t.trim().to_string();
        } else if let Some(t) = l.strip_prefix("## ") {
            page.sections.push(t.trim().to_string());
        } else if l.trim() == "```text" && page.syntax.is_empty() {
            page.syntax = lines.next().unwrap_or_default().trim().to_string();
        } else if let Some(v) = field("**Available since:**") {
            page.since = v;
        } else if let Some(v) = field("**Time complexity:**") {
            page.complexity = v;
        } else if let Some(v) = field("**ACL categories:**") {
            page.acl = v
                .split_whitespace()
                .map(|c| c.trim_matches('`').to_string())
                .collect();
        }
    }
    page
}

/// The sections every command page has, in this order.
const PAGE_SECTIONS: [&str; 5] = ["Arguments", "Reply", "Errors", "Examples", "See also"];

#[test]
fn every_command_has_a_page_that_agrees_with_command_docs() {
    let s = Server::start();
    let mut c = s.conn();
    let listed = module_commands(&mut c);
    let names: Vec<&str> = listed.iter().map(String::as_str).collect();
    let docs = command_docs(&mut c, &names);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands");
    let mut problems = Vec::new();
    for name in &names {
        let path = dir.join(format!("{name}.md"));
        if !path.exists() {
            problems.push(format!("{name}: no page docs/commands/{name}.md"));
            continue;
        }
        let page = read_page(&path);
        let d = &docs[*name];
        let want = (
            name.to_ascii_uppercase(),
            command_syntax(name, d),
            d.text("since").unwrap_or_default(),
            d.text("complexity").unwrap_or_default(),
        );
        let got = (
            page.title.clone(),
            page.syntax.clone(),
            page.since.clone(),
            page.complexity.clone(),
        );
        if got != want {
            problems.push(format!(
                "docs/commands/{name}.md disagrees with COMMAND DOCS:\n  page:   {got:?}\n  server: {want:?}"
            ));
        }
        let sections: Vec<&str> = page
            .sections
            .iter()
            .map(String::as_str)
            .filter(|s| PAGE_SECTIONS.contains(s))
            .collect();
        if sections != PAGE_SECTIONS {
            problems.push(format!(
                "docs/commands/{name}.md: sections {:?}, want {PAGE_SECTIONS:?}",
                page.sections
            ));
        }
        // ACL categories: Redis 7.0 has no module API for them (COMMAND INFO
        // shows none); where the server has them, the page must list the same.
        let info: Value = redis::cmd("COMMAND")
            .arg("INFO")
            .arg(*name)
            .query(&mut c)
            .expect("COMMAND INFO");
        let cats: Vec<String> = items(&items(&info)[0])
            .get(6)
            .map(|v| items(v).iter().map(text).collect())
            .unwrap_or_default();
        if !cats.is_empty() && cats != page.acl {
            problems.push(format!(
                "docs/commands/{name}.md: ACL categories {:?}, the server has {cats:?}",
                page.acl
            ));
        }
    }
    // No page for a command the module does not have.
    for e in std::fs::read_dir(&dir).expect("docs/commands") {
        let file = e.expect("entry").file_name().to_string_lossy().into_owned();
        if let Some(cmd) = file.strip_suffix(".md") {
            if cmd != "index" && !names.contains(&cmd) {
                problems.push(format!("docs/commands/{file}: no such command"));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_syntax_line_follows_redis_io() {
    let arg = |name: &str, kind: &str| Arg {
        name: name.into(),
        kind: kind.into(),
        token: None,
        summary: None,
        key_spec_index: None,
        optional: false,
        multiple: false,
        args: Vec::new(),
    };
    let tok = |a: Arg, t: &str| Arg {
        token: Some(t.into()),
        ..a
    };
    let opt = |a: Arg| Arg {
        optional: true,
        ..a
    };
    let units = Arg {
        args: vec![
            tok(arg("day", "pure-token"), "day"),
            tok(arg("week", "pure-token"), "week"),
        ],
        ..arg("unit", "oneof")
    };
    let period = opt(tok(
        Arg {
            args: vec![units, opt(tok(arg("ago", "integer"), "AGO"))],
            ..arg("period", "block")
        },
        "PERIOD",
    ));
    let doc = Doc {
        fields: BTreeMap::new(),
        args: vec![
            arg("key", "key"),
            Arg {
                multiple: true,
                ..arg("member", "string")
            },
            opt(tok(arg("withscores", "pure-token"), "WITHSCORES")),
            period,
        ],
    };
    assert_eq!(
        command_syntax("rank.x", &doc),
        "RANK.X key member [member ...] [WITHSCORES] [PERIOD <day | week> [AGO ago]]"
    );
}
