//! Counters for the `INFO hotrank` section.

use std::sync::atomic::{AtomicU64, Ordering};

pub static VIEWS_COUNTED: AtomicU64 = AtomicU64::new(0);
pub static VIEWS_DUPLICATE: AtomicU64 = AtomicU64::new(0);
pub static VIEWS_SUSPICIOUS: AtomicU64 = AtomicU64::new(0);
pub static TRIMS: AtomicU64 = AtomicU64::new(0);
pub static ARTICLES_TRIMMED: AtomicU64 = AtomicU64::new(0);
pub static ARTICLES_SWEPT: AtomicU64 = AtomicU64::new(0);
pub static UPKEEP_ERRORS: AtomicU64 = AtomicU64::new(0);
pub static TOP_CALLS: AtomicU64 = AtomicU64::new(0);
pub static TOP_EXAMINED: AtomicU64 = AtomicU64::new(0);
pub static ERRORS: AtomicU64 = AtomicU64::new(0);
pub static PANICS: AtomicU64 = AtomicU64::new(0);

/// Adds `n` to a counter.
pub fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// All counters as (INFO field, value).
pub fn snapshot() -> Vec<(&'static str, u64)> {
    let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let calls = g(&TOP_CALLS);
    let examined = g(&TOP_EXAMINED);
    vec![
        ("views_counted", g(&VIEWS_COUNTED)),
        ("views_duplicate", g(&VIEWS_DUPLICATE)),
        ("views_suspicious", g(&VIEWS_SUSPICIOUS)),
        ("trims", g(&TRIMS)),
        ("articles_trimmed", g(&ARTICLES_TRIMMED)),
        ("articles_swept", g(&ARTICLES_SWEPT)),
        ("top_calls", calls),
        ("top_articles_examined", examined),
        (
            "top_articles_examined_per_call",
            examined.checked_div(calls).unwrap_or(0),
        ),
        ("errors", g(&ERRORS)),
        ("upkeep_errors", g(&UPKEEP_ERRORS)),
        ("panics_caught", g(&PANICS)),
    ]
}
