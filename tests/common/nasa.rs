//! The NASA access log (`data/nasa_19950801.tsv.gz`) read with the
//! examples' parser (`examples/shared/log.rs`), for tests/hot_nasa.rs and
//! tests/defects.rs. Included with `#[path = "common/nasa.rs"] mod nasa;`.
//! (log.rs brings its own three unit tests into every crate that includes it.)
#![allow(dead_code)]

#[path = "../../examples/shared/log.rs"]
mod log;

/// Article views: (url path, host, time ms).
pub type Views = Vec<(Vec<u8>, Vec<u8>, i64)>;

/// The article views of the NASA log at `path`, read with the examples' parser
/// (`examples/shared/log.rs`: a `GET` of an `.html` page answered with `200`):
/// (url path, host, time ms) in file order, the number of log lines (header
/// excluded) and the last line's time in unix seconds. Checks the header, that
/// every line parses and that the log is in time order.
pub fn views(path: &std::path::Path) -> (Views, u64, i64) {
    use std::io::BufRead;
    let mut header = String::new();
    log::open(path)
        .expect("open log")
        .read_line(&mut header)
        .expect("read the header");
    assert!(
        header.starts_with("host\tlogname\ttime\tmethod\turl\tresponse\tbytes"),
        "header"
    );
    let (mut views, mut last_time) = (Vec::new(), 0i64);
    let counts = log::for_each_line(path, None, |line_no, rec| {
        assert!(rec.time >= last_time, "log is in time order");
        last_time = rec.time;
        if let Some(v) = rec.view(line_no) {
            views.push((
                v.article.into_bytes(),
                v.visitor.into_bytes(),
                v.time * 1000,
            ));
        }
        Ok(())
    })
    .expect("read the log");
    assert_eq!(counts.malformed, 0, "every line of the NASA log parses");
    (views, counts.lines, last_time)
}
