//! Integration tests of the module configs on every path that sets them:
//! loadmodule arguments (`name value` and `hotrank.name value`), CONFIG SET,
//! and what INFO hotrank shows of them.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::*;
use redis::Connection;

/// The `hotrank_*` fields of INFO hotrank, as text.
fn info_fields(c: &mut Connection) -> std::collections::BTreeMap<String, String> {
    let s: String = redis::cmd("INFO").arg("hotrank").query(c).expect("INFO");
    s.lines()
        .filter_map(|l| l.strip_prefix("hotrank_"))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

/// Out-of-range, non-numeric or non-integer values of every config.
const BAD: &[(&str, &str)] = &[
    ("visitor-window-seconds", "0"),
    ("visitor-window-seconds", "2592001"),
    ("retention-seconds", "0"),
    ("retention-seconds", "-100000"),
    ("retention-seconds", "59"),
    ("dedup-seconds", "5000000"),
    ("dedup-seconds", "-1"),
    ("dedup-shards", "-1"),
    ("dedup-shards", "0"),
    ("dedup-shards", "65537"),
    ("max-articles", "-1"),
    ("max-articles", "100000001"),
    ("visitor-max-views", "-1"),
    ("visitor-max-views", "1000000001"),
    ("dedup-seconds", "1.5"),
    ("dedup-seconds", "abc"),
    ("dedup-seconds", ""),
    ("alpha", "nan"),
    ("alpha", "-0.5"),
    ("beta", "1e7"),
    ("base", "0"),
    ("base", "1e-300"),
    ("base", "0.0009"),
    ("gamma", "11"),
    ("gamma", "inf"),
];

/// Both loadmodule argument forms, and (third) the config directive
/// `--hotrank.<name> value` after loadmodule, as a redis.conf line would be.
#[test]
fn bad_module_arguments_refuse_to_load_in_both_forms() {
    for (name, bad) in BAD {
        for form in [
            name.to_string(),
            format!("hotrank.{name}"),
            format!("--hotrank.{name}"),
        ] {
            match Server::try_start_with_module_args(&[&form, bad]) {
                Ok(s) => {
                    let mut c = s.conn();
                    let shown = config_get(&mut c, &format!("hotrank.{name}"));
                    panic!("loadmodule … {form} {bad:?} loaded (CONFIG GET shows {shown})");
                }
                // The directive is applied by the server, which logs it its own way.
                Err(log) => {
                    assert!(
                        log.contains(&format!("hotrank.{name}")),
                        "{form} {bad:?}: no clear log line in:\n{log}"
                    );
                    // The directive is the server's to report.
                    if !form.starts_with("--") {
                        let ours: Vec<&str> =
                            log.lines().filter(|l| l.contains("<hotrank>")).collect();
                        assert_eq!(ours.len(), 1, "{form} {bad:?}: {ours:?}");
                        let line = ours[0];
                        assert!(
                            line.contains(&format!("bad loadmodule argument '{form} {bad}'"))
                                && line.contains(" in ["),
                            "{form} {bad:?}: not one clean line with the range: {line}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn unknown_or_incomplete_module_arguments_refuse_to_load() {
    for args in [
        &["hotrank.nope", "1"][..],
        &["nope", "1"],
        &["dedup-seconds"],
        &["hotrank.alpha", "2", "gamma"],
    ] {
        let log = match Server::try_start_with_module_args(args) {
            Ok(_) => panic!("loadmodule … {args:?} loaded"),
            Err(log) => log,
        };
        let ours: Vec<&str> = log.lines().filter(|l| l.contains("<hotrank>")).collect();
        assert_eq!(ours.len(), 1, "{args:?}: {ours:?}");
        let line = ours[0];
        assert!(
            line.contains("bad loadmodule argument '"),
            "{args:?}: no clear log line in:\n{log}"
        );
        // An unknown name lists the valid ones; a missing value says so.
        if args.len() % 2 == 1 {
            assert!(line.contains("has no value"), "{line}");
        } else {
            assert!(
                line.contains("valid names") && line.contains("visitor-window-seconds"),
                "{line}"
            );
        }
    }
}

/// Starts a server with the module arguments `args` (`name value` pairs) and
/// checks that CONFIG GET shows every value as given.
fn loads_and_shows(args: &[&str]) {
    let s = Server::try_start_with_module_args(args)
        .unwrap_or_else(|log| panic!("did not start:\n{log}"));
    let mut c = s.conn();
    for pair in args.chunks(2) {
        let name = pair[0].trim_start_matches("hotrank.");
        assert_eq!(
            config_get(&mut c, &format!("hotrank.{name}")),
            pair[1],
            "{name}"
        );
    }
}

#[test]
fn good_module_arguments_load_in_both_forms_and_show_in_config_get() {
    let args = [
        "visitor-window-seconds",
        "7",
        "hotrank.retention-seconds",
        "60",
        "dedup-seconds",
        "0",
        "hotrank.dedup-shards",
        "65536",
        "max-articles",
        "0",
        "hotrank.visitor-max-views",
        "1000000000",
        "alpha",
        "2.5",
        "hotrank.beta",
        "0",
        "base",
        "0.001",
        "hotrank.gamma",
        "10",
        "replicate",
        "commands",
    ];
    loads_and_shows(&args);
    loads_and_shows(&["hotrank.replicate", "effects"]);
    // Range ends of the other side, in the other form.
    let args = [
        "hotrank.visitor-window-seconds",
        "2592000",
        "retention-seconds",
        "315360000",
        "hotrank.dedup-seconds",
        "4294967",
        "dedup-shards",
        "1",
        "hotrank.max-articles",
        "100000000",
        "visitor-max-views",
        "0",
        "hotrank.base",
        "1000000",
        "gamma",
        "0",
    ];
    loads_and_shows(&args);
}

#[test]
fn config_set_refuses_the_same_bad_values_and_keeps_the_old_one() {
    let s = Server::start();
    let mut c = s.conn();
    for (name, bad) in BAD {
        let key = format!("hotrank.{name}");
        let before = config_get(&mut c, &key);
        let e = err(&mut c, &["CONFIG", "SET", &key, bad]);
        assert!(e.starts_with("ERR"), "{key} {bad:?}: {e}");
        assert_eq!(config_get(&mut c, &key), before, "{key} {bad:?} changed it");
    }
}

#[test]
fn info_hotrank_shows_the_formula_fingerprint_and_every_config() {
    let s = Server::start();
    let mut c = s.conn();
    let i0 = info_fields(&mut c);
    let fp0 = i0
        .get("formula_fingerprint")
        .unwrap_or_else(|| panic!("no formula_fingerprint in {i0:?}"))
        .clone();
    assert_eq!(fp0.len(), 16, "{fp0}");
    assert!(fp0.bytes().all(|b| b.is_ascii_hexdigit()), "{fp0}");
    for (name, want) in [
        ("alpha", "1"),
        ("beta", "1.2"),
        ("base", "2"),
        ("gamma", "1.5"),
        ("dedup_seconds", "900"),
        ("dedup_shards", "4096"),
        ("visitor_max_views", "60"),
        ("visitor_window_seconds", "3600"),
        ("max_articles", "1000"),
        ("retention_seconds", "7776000"),
    ] {
        assert_eq!(
            i0.get(&format!("config_{name}")).map(String::as_str),
            Some(want),
            "config_{name} in {i0:?}"
        );
    }
    config_set(&mut c, "hotrank.gamma", "1.8");
    config_set(&mut c, "hotrank.max-articles", "5");
    let i1 = info_fields(&mut c);
    assert_ne!(i1["formula_fingerprint"], fp0, "fingerprint unchanged");
    assert_eq!(i1["config_gamma"], "1.8");
    assert_eq!(i1["config_max_articles"], "5");
    // Back to the same parameters: the same fingerprint.
    config_set(&mut c, "hotrank.gamma", "1.5");
    assert_eq!(info_fields(&mut c)["formula_fingerprint"], fp0);
}
