//! Web access log parsing shared by the examples (`replay`, `tune`) and by
//! `tests/tune.rs`, which include this file with `#[path]`.
//!
//! Two line formats are accepted, detected line by line:
//! - **TSV** (the demo's NASA log): a header line starting with `host\t`, then
//!   tab-separated columns `host logname time method url response bytes [referer useragent]`,
//!   `time` in unix seconds or as a Common Log Format date.
//! - **Common Log Format** (and the Combined format, whose extra fields are ignored):
//!   `host ident user [01/Aug/1995:00:00:01 -0400] "GET /path HTTP/1.0" 200 1234`.
//!
//! The file may be gzip-compressed or plain; gzip is recognised by its magic bytes.
//!
//! What counts as a view of an article: a `GET` answered with `200` of a `.html`
//! page; the article is the URL path without query string or fragment, the visitor
//! is the host.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

/// One log record, borrowing from the line. `time` is in unix seconds.
#[derive(Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub host: &'a str,
    pub time: i64,
    pub method: &'a str,
    pub url: &'a str,
    pub response: &'a str,
}

/// One page view of an article, owned. `time` is in unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// 1-based line number in the log.
    pub line_no: u64,
    pub article: String,
    pub visitor: String,
    pub time: i64,
}

impl<'a> Record<'a> {
    /// A record of these fields; none when `host` is empty.
    fn new(
        host: &'a str,
        time: i64,
        method: &'a str,
        url: &'a str,
        response: &'a str,
    ) -> Option<Self> {
        if host.is_empty() {
            return None;
        }
        Some(Record {
            host,
            time,
            method,
            url,
            response,
        })
    }

    /// The view this record stands for, if it is a `GET` of a `.html` page answered
    /// with `200`.
    pub fn view(&self, line_no: u64) -> Option<View> {
        if self.method != "GET" || self.response != "200" {
            return None;
        }
        let article = article_of(self.url)?;
        Some(View {
            line_no,
            article: article.to_string(),
            visitor: self.host.to_string(),
            time: self.time,
        })
    }
}

/// Opens a log file for reading line by line, decompressing it if it starts with
/// the gzip magic bytes (`1f 8b`).
pub fn open(path: &Path) -> Result<Box<dyn BufRead>, String> {
    let mut magic = [0u8; 2];
    let mut file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let got = file
        .read(&mut magic)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if got == 2 && magic == [0x1f, 0x8b] {
        Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            MultiGzDecoder::new(file),
        )))
    } else {
        Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
    }
}

/// Counts of what [`for_each_line`] read.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineCounts {
    /// Lines read, the TSV header excluded.
    pub lines: u64,
    /// Lines that are neither TSV nor Common Log Format.
    pub malformed: u64,
}

/// Reads up to `max_lines` lines (all when `None`) of the log at `path` and calls
/// `f(line_no, record)` for every well-formed one, in file order. A TSV header line
/// is skipped. `f` may stop the reading early by returning an error.
pub fn for_each_line(
    path: &Path,
    max_lines: Option<u64>,
    mut f: impl FnMut(u64, &Record) -> Result<(), String>,
) -> Result<LineCounts, String> {
    let mut reader = open(path)?;
    let mut counts = LineCounts::default();
    let mut line = Vec::new();
    let mut line_no: u64 = 0;
    while max_lines.is_none_or(|m| line_no < m) {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("reading {} (line {}): {e}", path.display(), line_no + 1))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if line_no == 1 && text.starts_with("host\t") {
            continue; // TSV header
        }
        counts.lines += 1;
        match parse_line(text) {
            Some(rec) => f(line_no, &rec)?,
            None => counts.malformed += 1,
        }
    }
    Ok(counts)
}

/// Reads the views (see [`Record::view`]) of the first `max_lines` lines of a log
/// (all when `None`), in file order.
pub fn read_views(path: &Path, max_lines: Option<u64>) -> Result<(Vec<View>, LineCounts), String> {
    let mut views = Vec::new();
    let counts = for_each_line(path, max_lines, |line_no, rec| {
        views.extend(rec.view(line_no));
        Ok(())
    })?;
    Ok((views, counts))
}

/// Publish times from a file of lines `article<TAB or space>time` (`time` in unix
/// seconds or as a Common Log Format date), gzipped or plain; blank lines and
/// lines starting with `#` are skipped. Returns article → unix seconds.
pub fn read_publish_times(path: &Path) -> Result<BTreeMap<String, i64>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in open(path)?.lines().enumerate() {
        let line = line.map_err(|e| format!("reading {}: {e}", path.display()))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = line
            .split_once(['\t', ' '])
            .and_then(|(a, t)| Some((a, parse_time(t.trim())?)));
        let Some((article, time)) = parsed else {
            return Err(format!(
                "{} line {}: want `article time`, got {line:?}",
                path.display(),
                i + 1
            ));
        };
        out.insert(article.to_string(), time);
    }
    Ok(out)
}

/// A record from a TSV line or, failing that, a Common Log Format line.
pub fn parse_line(line: &str) -> Option<Record<'_>> {
    if line.contains('\t') {
        parse_tsv(line)
    } else {
        parse_clf(line)
    }
}

/// `host logname time method url response …`, tab-separated.
fn parse_tsv(line: &str) -> Option<Record<'_>> {
    let mut cols = line.split('\t');
    let host = cols.next()?.trim();
    let _logname = cols.next()?;
    let time = parse_time(cols.next()?.trim())?;
    let method = cols.next()?.trim();
    let url = cols.next()?.trim();
    let response = cols.next()?.trim();
    Record::new(host, time, method, url, response)
}

/// `host ident user [date zone] "METHOD url protocol" status bytes …`.
fn parse_clf(line: &str) -> Option<Record<'_>> {
    let (host, rest) = line.split_once(' ')?;
    let open = rest.find('[')?;
    let close = open + rest[open..].find(']')?;
    let time = parse_time(&rest[open + 1..close])?;
    let rest = rest[close + 1..].trim_start();
    let rest = rest.strip_prefix('"')?;
    let quote = rest.find('"')?;
    let mut request = rest[..quote].split_whitespace();
    let method = request.next()?;
    let url = request.next().unwrap_or("");
    let response = rest[quote + 1..].split_whitespace().next()?;
    Record::new(host, time, method, url, response)
}

/// The article of a request URL: its path without query string or fragment, if it
/// names an `.html` page.
pub fn article_of(url: &str) -> Option<&str> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    (path.len() > ".html".len() && path.ends_with(".html")).then_some(path)
}

/// Unix seconds, or a Common Log Format date such as `01/Aug/1995:00:00:01 -0400`
/// (optionally in brackets).
pub fn parse_time(s: &str) -> Option<i64> {
    if let Ok(t) = s.parse::<i64>() {
        return Some(t);
    }
    let s = s.trim_start_matches('[').trim_end_matches(']');
    let (stamp, zone) = match s.split_once(' ') {
        Some((a, b)) => (a, Some(b.trim())),
        None => (s, None),
    };
    let mut it = stamp.splitn(4, [':', '/']);
    let day: i64 = it.next()?.parse().ok()?;
    let month = month_number(it.next()?)?;
    let year: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let m: i64 = hms.next()?.parse().ok()?;
    let sec: i64 = hms.next()?.parse().ok()?;
    let offset = match zone {
        Some(z) => zone_offset(z)?,
        None => 0,
    };
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec - offset)
}

/// 1 for `Jan` … 12 for `Dec`.
fn month_number(name: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    MONTHS.iter().position(|m| *m == name).map(|i| i as i64 + 1)
}

/// Seconds east of UTC of a `+hhmm` / `-hhmm` zone.
fn zone_offset(z: &str) -> Option<i64> {
    if z.len() != 5 || !z.is_char_boundary(1) {
        return None;
    }
    let sign = match &z[..1] {
        "+" => 1,
        "-" => -1,
        _ => return None,
    };
    let zh: i64 = z[1..3].parse().ok()?;
    let zm: i64 = z[3..5].parse().ok()?;
    Some(sign * (zh * 3600 + zm * 60))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clf_dates() {
        assert_eq!(parse_time("807256800"), Some(807_256_800));
        // 807256800 == 1995-08-01 06:00:00 UTC == 1995-08-01 02:00:00 -0400
        assert_eq!(parse_time("01/Aug/1995:02:00:00 -0400"), Some(807_256_800));
        assert_eq!(
            parse_time("[01/Aug/1995:06:00:00 +0000]"),
            Some(807_256_800)
        );
        assert_eq!(parse_time("01/Jan/1970:00:00:00"), Some(0));
        assert_eq!(parse_time("yesterday"), None);
        assert_eq!(parse_time("01/Aug/1995:02:00:00 -04€0"), None);
    }

    #[test]
    fn articles() {
        assert_eq!(article_of("/a/b.html?x=1"), Some("/a/b.html"));
        assert_eq!(article_of("/a/b.gif"), None);
        assert_eq!(article_of("/"), None);
    }

    #[test]
    fn tsv_and_clf_lines_give_the_same_record() {
        let tsv = "h.example.com\t-\t807256800\tGET\t/a/b.html?q=1\t200\t8677\t\t";
        let clf = r#"h.example.com - - [01/Aug/1995:02:00:00 -0400] "GET /a/b.html?q=1 HTTP/1.0" 200 8677"#;
        let a = parse_line(tsv).expect("tsv");
        let b = parse_line(clf).expect("clf");
        assert_eq!(a, b);
        assert_eq!(a.view(1).map(|v| v.article), Some("/a/b.html".to_string()));
        // Combined format: referer and user agent after the size are ignored.
        let combined = format!("{clf} \"http://ref/\" \"Mozilla/5.0 (X11)\"");
        assert_eq!(parse_line(&combined), Some(a));
        // A request without protocol (HTTP/0.9) still parses.
        let old = r#"h - - [01/Aug/1995:02:00:00 -0400] "GET /x.html" 200 -"#;
        assert_eq!(parse_line(old).map(|r| r.url), Some("/x.html"));
        assert_eq!(parse_line("garbage line"), None);
        assert_eq!(
            parse_line(r#"h - - [bad date] "GET / HTTP/1.0" 200 1"#),
            None
        );
    }
}
