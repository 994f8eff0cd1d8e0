//! The SVG chart: the rank over time of the leading articles (those listed in the
//! most samples over all settings), one small chart per setting, side by side
//! (at most four to a row), with one legend. Drawn with `plotters`' SVG backend, which writes text as
//! `<text>` elements, so no font files are needed.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::metrics::leading_articles;
use super::replay::Run;
use super::Outcome;

/// Width of one setting's chart, in pixels.
const PANEL_W: u32 = 420;
/// Height of one setting's chart, in pixels.
const PANEL_H: u32 = 380;
const TITLE_H: u32 = 44;
/// Height of one legend row, in pixels.
const LEGEND_ROW_H: u32 = 22;
const LEGEND_COLS: usize = 2;
/// At most this many charts per row; more settings wrap onto further rows.
const MAX_COLS: usize = 4;

/// Tableau 10: distinct colours for up to ten articles.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

type DrawResult<T> = Result<T, String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("drawing the chart: {e:?}")
}

/// Writes [`svg`] to `path`, creating its directory if needed.
pub fn write(path: &std::path::Path, o: &Outcome, articles: usize) -> DrawResult<()> {
    let svg = svg(o, articles)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The chart of `o` as an SVG document: `articles` leading articles (at most 10).
/// The time axis starts at the log's first view.
pub fn svg(o: &Outcome, articles: usize) -> DrawResult<String> {
    let leading = leading_articles(&o.runs, articles.min(COLORS.len()));
    let n = o.runs.len().max(1);
    // As few rows as MAX_COLS allows, filled evenly (9 settings: 3 × 3).
    let rows = n.div_ceil(MAX_COLS);
    let cols = n.div_ceil(rows);
    let legend_rows = leading.len().div_ceil(LEGEND_COLS) as u32;
    let panels_h = PANEL_H * rows as u32;
    let size = (
        PANEL_W * cols.max(2) as u32,
        TITLE_H + panels_h + 16 + legend_rows * LEGEND_ROW_H,
    );
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (title, rest) = root.split_vertically(TITLE_H);
        let (panels, legend) = rest.split_vertically(panels_h);
        draw_title(&title, o, leading.len())?;
        for (run, area) in o.runs.iter().zip(panels.split_evenly((rows, cols))) {
            draw_panel(&area, run, &leading, o.plan.limit, o.start)?;
        }
        draw_legend(&legend, &leading)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn draw_title(area: &DrawingArea<SVGBackend, Shift>, o: &Outcome, n: usize) -> DrawResult<()> {
    let text = format!(
        "Rank in HOT.TOP LIMIT {} of the {n} articles listed most often, per setting \
         (sampled every {} min)",
        o.plan.limit,
        o.plan.step_secs / 60
    );
    let style = TextStyle::from(("sans-serif", 18).into_font()).color(&BLACK);
    area.draw_text(&text, &style, (12, 14)).map_err(err)
}

/// One setting's chart: x = hours since `start`, y = rank (1 at the top). A line
/// joins consecutive samples that both list the article; a gap means it was out.
fn draw_panel(
    area: &DrawingArea<SVGBackend, Shift>,
    run: &Run,
    leading: &[String],
    limit: usize,
    start: i64,
) -> DrawResult<()> {
    let hours = |t: i64| (t - start) as f64 / 3600.0;
    let end = run.samples.last().map_or(1.0, |s| hours(s.at)).max(1.0);
    // Ranks are drawn as negative numbers so rank 1 is at the top; the labels
    // print them positive.
    let mut chart = ChartBuilder::on(area)
        .caption(run.setting.label(), ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(36)
        .build_cartesian_2d(0f64..end, -(limit as f64 + 0.5)..-0.5)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("hours since the first view")
        .y_desc("rank")
        .y_labels(limit)
        .y_label_formatter(&|v| rank_label(-v.round() as i64))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(err)?;
    for (article, color) in leading.iter().zip(COLORS) {
        for segment in stays_of(run, article) {
            let points: Vec<(f64, f64)> = segment
                .iter()
                .map(|&(t, rank)| (hours(t), -(rank as f64)))
                .collect();
            // A stay of one sample is a dot; longer ones are lines (no dots, which
            // keeps the SVG small).
            if let [p] = points[..] {
                chart
                    .draw_series(std::iter::once(Circle::new(p, 3, color.filled())))
                    .map_err(err)?;
            } else {
                chart
                    .draw_series(LineSeries::new(points, color.stroke_width(2)))
                    .map_err(err)?;
            }
        }
    }
    Ok(())
}

/// Rank 1 and every fifth rank are labelled; the others get only a grid line.
fn rank_label(rank: i64) -> String {
    if rank == 1 || rank % 5 == 0 {
        rank.to_string()
    } else {
        String::new()
    }
}

/// The article's stays in the run's top: runs of consecutive samples that list it,
/// each as (sample time in unix seconds, 1-based rank).
fn stays_of(run: &Run, article: &str) -> Vec<Vec<(i64, usize)>> {
    let mut out: Vec<Vec<(i64, usize)>> = Vec::new();
    let mut current: Vec<(i64, usize)> = Vec::new();
    for s in &run.samples {
        match s.top.iter().position(|a| a == article) {
            Some(i) => current.push((s.at, i + 1)),
            None if !current.is_empty() => out.push(std::mem::take(&mut current)),
            None => {}
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A colour swatch and the article id for each leading article, in columns.
fn draw_legend(area: &DrawingArea<SVGBackend, Shift>, leading: &[String]) -> DrawResult<()> {
    let (w, _) = area.dim_in_pixel();
    let col_w = w as i32 / LEGEND_COLS as i32;
    let style = TextStyle::from(("sans-serif", 13).into_font()).color(&BLACK);
    for (i, (article, color)) in leading.iter().zip(COLORS).enumerate() {
        let x = 16 + col_w * (i % LEGEND_COLS) as i32;
        let y = 8 + LEGEND_ROW_H as i32 * (i / LEGEND_COLS) as i32;
        area.draw(&Rectangle::new([(x, y), (x + 22, y + 4)], color.filled()))
            .map_err(err)?;
        let label = format!("{}. {article}", i + 1);
        area.draw_text(&label, &style, (x + 30, y - 5))
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::replay::Sample;
    use super::super::{Plan, Setting};
    use super::*;

    /// Five settings of made-up samples: five charts, on two rows of three.
    #[test]
    fn five_settings_wrap_onto_two_rows() {
        let settings: Vec<Setting> = (0..5)
            .map(|i| match i {
                0..=2 => Setting::Hot {
                    gamma: 1.0 + i as f64 / 10.0,
                    base: 2.0,
                },
                _ => Setting::Trending {
                    half_life_secs: 3600 * i,
                },
            })
            .collect();
        let runs = settings
            .iter()
            .map(|&setting| Run {
                setting,
                board: String::new(),
                samples: (1..=12)
                    .map(|k| Sample {
                        at: 600 * k,
                        top: vec!["/a.html".into(), "/b & <c>.html".into()],
                    })
                    .collect(),
                statuses: Default::default(),
            })
            .collect();
        let o = Outcome {
            plan: Plan::new(settings.clone()),
            runs,
            metrics: Vec::new(),
            overlap: Vec::new(),
            views: 0,
            start: 0,
            published: Default::default(),
        };
        let svg = svg(&o, 8).expect("svg");
        for s in &settings {
            assert_eq!(
                svg.matches(&format!(">\n{}\n</text>", s.label())).count(),
                1
            );
        }
        let height = TITLE_H + 2 * PANEL_H + 16 + LEGEND_ROW_H;
        let head = format!("<svg width=\"{}\" height=\"{height}\"", 3 * PANEL_W);
        assert!(svg.starts_with(&head), "{}", &svg[..100]);
        // Ids are escaped in the legend.
        assert!(
            svg.contains("/b &amp; &lt;c&gt;.html"),
            "legend escapes ids"
        );
    }
}
