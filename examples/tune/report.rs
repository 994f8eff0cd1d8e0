//! The table `make tune` prints: one row of metrics per setting, then the overlap
//! matrix. Both are Markdown tables, so they read in a terminal and paste into a
//! README.

use std::fmt::Write;

use super::Outcome;

/// Both tables, with a line saying what was sampled.
pub fn table(o: &Outcome) -> String {
    let mut out = String::new();
    let hours = o.plan.step_secs as f64 / 3600.0;
    let _ = writeln!(
        out,
        "{} views of {} articles; HOT.TOP LIMIT {} AT t every {} min of log time ({} samples)\n",
        o.views,
        o.published.len(),
        o.plan.limit,
        o.plan.step_secs / 60,
        o.runs.first().map_or(0, |r| r.samples.len()),
    );
    out.push_str(&metrics_table(o));
    let _ = writeln!(
        out,
        "\nchurn: articles leaving the top {n} per hour; age: hours since publish \
         (first view in the log) of the listed articles; dwell: length of a stay in \
         the top {n} (in steps of {hours:.2} h); distinct: articles ever listed; next %: \
         share of the views of the following {min} min that went to an article the top \
         listed (how well the list foresees what is read next). gamma/base rows are \
         the hot ranking; trending rows rank by views decayed with that half-life \
         (HOT.TOP BY trending).\n",
        n = o.plan.limit,
        min = o.plan.step_secs / 60,
    );
    out.push_str(&overlap_table(o));
    out
}

/// `| setting | churn/h | age p50 h | age p90 h | dwell p50 h | distinct | next % |`.
pub fn metrics_table(o: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| setting           | churn/h | age p50 h | age p90 h | dwell p50 h | distinct | next % |"
    );
    let _ = writeln!(
        out,
        "|-------------------|--------:|----------:|----------:|------------:|---------:|-------:|"
    );
    for (run, m) in o.runs.iter().zip(&o.metrics) {
        let _ = writeln!(
            out,
            "| {:<17} | {:>7.1} | {:>9.2} | {:>9.2} | {:>11.2} | {:>8} | {:>6.1} |",
            run.setting.label(),
            m.churn_per_hour,
            m.age_median_h,
            m.age_p90_h,
            m.dwell_median_h,
            m.distinct,
            100.0 * m.next_share,
        );
    }
    out
}

/// The overlap matrix: mean share of the top two settings have in common.
pub fn overlap_table(o: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "overlap: mean over the samples of |A∩B| / max(|A|, |B|), A and B the two \
         settings' tops at the same instant (|A∩B| / {} once both are full)\n",
        o.plan.limit
    );
    let labels: Vec<String> = o.runs.iter().map(|r| r.setting.label()).collect();
    let width = labels.iter().map(String::len).max().unwrap_or(0).max(7);
    let _ = write!(out, "| {:<width$} |", "overlap");
    for l in &labels {
        let _ = write!(out, " {l:>width$} |");
    }
    let _ = write!(out, "\n|{}|", "-".repeat(width + 2));
    for _ in &labels {
        let _ = write!(out, "{}:|", "-".repeat(width + 1));
    }
    out.push('\n');
    for (l, row) in labels.iter().zip(&o.overlap) {
        let _ = write!(out, "| {l:<width$} |");
        for v in row {
            let _ = write!(out, " {v:>width$.2} |");
        }
        out.push('\n');
    }
    out
}
