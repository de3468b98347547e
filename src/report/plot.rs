//! Line charts (learning curves, win rates over training, ...) as PNG or SVG.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::{Deserialize, Serialize};

use super::{font, DrawError, ReportError};
use crate::util::atomic::{write_atomic, write_atomic_with};

/// Output size of [`LineChart::write_png`] and [`LineChart::write_svg`], in pixels.
pub const CHART_SIZE: (u32, u32) = (800, 500);

/// One named line of `(x, y)` points, drawn in the order given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Data points; every coordinate must be finite.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series from a name and its points.
    pub fn new(name: impl Into<String>, points: impl IntoIterator<Item = (f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points: points.into_iter().collect(),
        }
    }
}

/// A line chart: one or more series with markers on every point, a legend,
/// gridlines, and optional labelled horizontal reference lines (dashed).
///
/// Axes fit the data (and reference lines) unless `y_range` fixes the y axis;
/// parts of lines outside a fixed range are clipped at its edges.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LineChart {
    /// Caption above the plot.
    pub title: String,
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// The lines to draw; each gets its own colour and marker shape.
    pub series: Vec<Series>,
    /// Horizontal dashed lines `(label, y)`, e.g. `("thesis 0.30", 0.30)`.
    pub reference_lines: Vec<(String, f64)>,
    /// Fixed `(min, max)` for the y axis instead of fitting the data.
    pub y_range: Option<(f64, f64)>,
}

/// Tableau 10: distinct, colour-blind friendlier than the plotters defaults.
const PALETTE: [RGBColor; 10] = [
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
const REFERENCE_COLOR: RGBColor = RGBColor(60, 60, 60);

impl LineChart {
    /// An empty chart with a title and axis labels.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..LineChart::default()
        }
    }

    /// Adds a series (builder style).
    pub fn with_series(
        mut self,
        name: impl Into<String>,
        points: impl IntoIterator<Item = (f64, f64)>,
    ) -> Self {
        self.series.push(Series::new(name, points));
        self
    }

    /// Adds a labelled horizontal reference line (builder style).
    pub fn with_reference_line(mut self, label: impl Into<String>, y: f64) -> Self {
        self.reference_lines.push((label.into(), y));
        self
    }

    /// Fixes the y axis range (builder style).
    pub fn with_y_range(mut self, min: f64, max: f64) -> Self {
        self.y_range = Some((min, max));
        self
    }

    /// Renders the chart as an 800x500 PNG at `path`, atomically (the image
    /// is encoded to a temporary file in the same directory, then renamed).
    pub fn write_png(&self, path: impl AsRef<Path>) -> Result<(), ReportError> {
        let path = path.as_ref();
        let layout = self.layout(path)?;
        write_atomic_with(path, |tmp| {
            let root = BitMapBackend::new(tmp, CHART_SIZE).into_drawing_area();
            render_to(path, &root, |root| self.draw(root, &layout))
        })
    }

    /// Renders the chart as an 800x500 SVG at `path`, atomically.
    pub fn write_svg(&self, path: impl AsRef<Path>) -> Result<(), ReportError> {
        let path = path.as_ref();
        let svg = self.render_svg(path)?;
        Ok(write_atomic(path, svg.as_bytes())?)
    }

    /// The chart as an SVG document (800x500).
    pub fn to_svg_string(&self) -> Result<String, ReportError> {
        self.render_svg(Path::new("<svg string>"))
    }

    fn render_svg(&self, path: &Path) -> Result<String, ReportError> {
        let layout = self.layout(path)?;
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, CHART_SIZE).into_drawing_area();
            render_to(path, &root, |root| self.draw(root, &layout))?;
        }
        Ok(svg)
    }

    /// Checks the data and works out the axis ranges and legend corner.
    fn layout(&self, path: &Path) -> Result<Layout, ReportError> {
        let invalid = |reason: String| ReportError::InvalidChart {
            path: path.to_path_buf(),
            reason,
        };
        if self.series.is_empty() {
            return Err(invalid("the chart has no series".into()));
        }
        for s in &self.series {
            if s.points.is_empty() {
                return Err(invalid(format!("series `{}` has no points", s.name)));
            }
            if let Some((i, p)) = s
                .points
                .iter()
                .enumerate()
                .find(|(_, (x, y))| !x.is_finite() || !y.is_finite())
            {
                return Err(invalid(format!(
                    "series `{}` point {i} is not finite: ({}, {})",
                    s.name, p.0, p.1
                )));
            }
        }
        if let Some((label, y)) = self.reference_lines.iter().find(|(_, y)| !y.is_finite()) {
            return Err(invalid(format!(
                "reference line `{label}` is not finite: {y}"
            )));
        }

        let points = || self.series.iter().flat_map(|s| s.points.iter().copied());
        let x = pad_range(min_max(points().map(|p| p.0)), 0.02);
        let y = match self.y_range {
            Some((lo, hi)) => {
                if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                    return Err(invalid(format!(
                        "y_range ({lo}, {hi}) must be finite with min < max"
                    )));
                }
                (lo, hi)
            }
            None => {
                let ys = points()
                    .map(|p| p.1)
                    .chain(self.reference_lines.iter().map(|r| r.1));
                pad_range(min_max(ys), 0.05)
            }
        };
        let legend = self.legend_corner(x, y);
        Ok(Layout { x, y, legend })
    }

    /// The plot corner with the least ink (sampled along the lines and the
    /// reference lines), so the legend covers as little data as possible.
    fn legend_corner(&self, x: (f64, f64), y: (f64, f64)) -> SeriesLabelPosition {
        // Normalised corner boxes, roughly the legend's size.
        const W: f64 = 0.4;
        const H: f64 = 0.35;
        let mut counts = [0usize; 4]; // UR, UL, LR, LL: preference order on ties.
        let mut add = |px: f64, py: f64| {
            let u = (px - x.0) / (x.1 - x.0);
            let v = (py - y.0) / (y.1 - y.0);
            if !(0.0..=1.0).contains(&v) {
                return; // clipped away, covers nothing
            }
            let right = u >= 1.0 - W;
            let left = u <= W;
            let top = v >= 1.0 - H;
            let bottom = v <= H;
            if top && right {
                counts[0] += 1;
            }
            if top && left {
                counts[1] += 1;
            }
            if bottom && right {
                counts[2] += 1;
            }
            if bottom && left {
                counts[3] += 1;
            }
        };
        const STEPS: usize = 20;
        for s in &self.series {
            for (i, &(px, py)) in s.points.iter().enumerate() {
                add(px, py);
                if let Some(&(qx, qy)) = s.points.get(i + 1) {
                    for k in 1..STEPS {
                        let t = k as f64 / STEPS as f64;
                        add(px + t * (qx - px), py + t * (qy - py));
                    }
                }
            }
        }
        for &(_, ry) in &self.reference_lines {
            for k in 0..=STEPS {
                add(x.0 + (x.1 - x.0) * k as f64 / STEPS as f64, ry);
            }
        }
        let best = (0..4).min_by_key(|&i| counts[i]).unwrap_or(0);
        [
            SeriesLabelPosition::UpperRight,
            SeriesLabelPosition::UpperLeft,
            SeriesLabelPosition::LowerRight,
            SeriesLabelPosition::LowerLeft,
        ][best]
            .clone()
    }

    /// Draws onto any plotters backend.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        layout: &Layout,
    ) -> Result<(), DrawError> {
        let (x0, x1) = layout.x;
        let (y0, y1) = layout.y;
        let x_fmt = tick_formatter(x1 - x0);
        let y_fmt = tick_formatter(y1 - y0);

        root.fill(&WHITE)?;
        let mut builder = ChartBuilder::on(root);
        builder
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(70);
        if !self.title.is_empty() {
            builder.caption(&self.title, (font::FAMILY, title_size(root, &self.title)));
        }
        let mut chart = builder.build_cartesian_2d(x0..x1, y0..y1)?;

        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .axis_desc_style((font::FAMILY, 18))
            .label_style((font::FAMILY, 15))
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .bold_line_style(BLACK.mix(0.15))
            .max_light_lines(0)
            .axis_style(BLACK.mix(0.8))
            .draw()?;

        // Reference lines under the data; their labels go on top (below).
        let visible_refs: Vec<&(String, f64)> = self
            .reference_lines
            .iter()
            .filter(|(_, ry)| (y0..=y1).contains(ry))
            .collect();
        for (_, ry) in &visible_refs {
            chart.draw_series(DashedLineSeries::new(
                vec![(x0, *ry), (x1, *ry)],
                10,
                6,
                REFERENCE_COLOR.stroke_width(2),
            ))?;
        }

        for (i, s) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let line_style = color.stroke_width(2);
            for (k, piece) in clip_polyline(&s.points, y0, y1).into_iter().enumerate() {
                let drawn = chart.draw_series(LineSeries::new(piece, line_style))?;
                if k == 0 {
                    drawn.label(s.name.as_str()).legend(move |(lx, ly)| {
                        EmptyElement::at((lx, ly))
                            + PathElement::new(vec![(-2, 0), (22, 0)], line_style)
                            + marker(i, (10, 0), color)
                    });
                }
            }
            chart.draw_series(
                s.points
                    .iter()
                    .filter(|p| p.1 >= y0 && p.1 <= y1)
                    .map(|&p| EmptyElement::at(p) + marker(i, (0, 0), color)),
            )?;
        }

        // Reference labels above the left end of their line, on a
        // translucent white box so data lines behind them stay readable.
        let label_font = TextStyle::from((font::FAMILY, 15).into_font())
            .color(&REFERENCE_COLOR)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        for (label, ry) in &visible_refs {
            let (w, h) = root.estimate_text_size(label, &label_font)?;
            let (w, h) = (w as i32, h as i32);
            let boxed = EmptyElement::at((x0, *ry))
                + Rectangle::new([(5, -h - 8), (w + 11, -3)], WHITE.mix(0.85).filled())
                + Text::new(label.clone(), (8, -5), label_font.clone());
            chart.draw_series(std::iter::once(boxed))?;
        }

        chart
            .configure_series_labels()
            .position(layout.legend.clone())
            .margin(12)
            .legend_area_size(30)
            .label_font((font::FAMILY, 15))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.4))
            .draw()?;
        Ok(())
    }
}

/// Axis ranges and legend placement, computed once per render.
struct Layout {
    x: (f64, f64),
    y: (f64, f64),
    legend: SeriesLabelPosition,
}

/// The largest title font size (26 px down to 12 px) whose caption fits the
/// chart width.
fn title_size<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> u32 {
    let available = root.dim_in_pixel().0.saturating_sub(40);
    (12..=26)
        .rev()
        .find(|&size| {
            let style = TextStyle::from((font::FAMILY, size).into_font());
            root.estimate_text_size(title, &style)
                .is_ok_and(|(w, _)| w <= available)
        })
        .unwrap_or(12)
}

/// Registers the chart font, runs `draw` on `root` and presents it (writes
/// the image); a failure is a [`ReportError::Render`] naming `path`.
pub(crate) fn render_to<DB: DrawingBackend>(
    path: &Path,
    root: &DrawingArea<DB, Shift>,
    draw: impl FnOnce(&DrawingArea<DB, Shift>) -> Result<(), DrawError>,
) -> Result<(), ReportError> {
    font::ensure_registered()
        .and_then(|()| draw(root))
        .and_then(|()| Ok(root.present()?))
        .map_err(|source| ReportError::Render {
            path: path.to_path_buf(),
            source,
        })
}

/// A filled marker of the shape for series `i`, centred at `at` (pixel
/// offset): circle, square, triangle, diamond, in turn.
fn marker<DB: DrawingBackend>(
    i: usize,
    at: (i32, i32),
    color: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    let style = color.filled();
    let (cx, cy) = at;
    match (i / PALETTE.len() + i) % 4 {
        0 => Circle::new(at, 4, style).into_dyn(),
        1 => Rectangle::new([(cx - 4, cy - 4), (cx + 4, cy + 4)], style).into_dyn(),
        2 => TriangleMarker::new(at, 6, style).into_dyn(),
        _ => Polygon::new(
            vec![(cx, cy - 5), (cx + 5, cy), (cx, cy + 5), (cx - 5, cy)],
            style,
        )
        .into_dyn(),
    }
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// Widens `(lo, hi)` by `frac` of its span on each side; a zero-width range
/// becomes a small range around the value.
fn pad_range((lo, hi): (f64, f64), frac: f64) -> (f64, f64) {
    let span = hi - lo;
    if span > 0.0 && span.is_finite() {
        (lo - span * frac, hi + span * frac)
    } else {
        let half = if lo == 0.0 { 0.5 } else { lo.abs() * 0.1 };
        (lo - half, hi + half)
    }
}

/// Tick labels with as many decimals as the axis span calls for, so labels
/// read `0.25` rather than `0.25000000000000006` and all use one precision.
fn tick_formatter(span: f64) -> impl Fn(&f64) -> String {
    let decimals = if span > 0.0 && span.is_finite() {
        (1.0 - span.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        2
    };
    move |v: &f64| {
        let s = format!("{v:.decimals$}");
        // Avoid "-0.00".
        if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
            s[1..].to_string()
        } else {
            s
        }
    }
}

/// Splits a polyline into the pieces inside `lo <= y <= hi`, cutting
/// segments where they cross the bounds.
fn clip_polyline(points: &[(f64, f64)], lo: f64, hi: f64) -> Vec<Vec<(f64, f64)>> {
    let inside = |p: (f64, f64)| p.1 >= lo && p.1 <= hi;
    let mut pieces: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    if let [only] = points {
        if inside(*only) {
            pieces.push(vec![*only]);
        }
        return pieces;
    }
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        // Parametric clip of segment a->b against the y slab.
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let dy = b.1 - a.1;
        if dy == 0.0 {
            if !inside(a) {
                t0 = 1.0;
                t1 = 0.0;
            }
        } else {
            let (ta, tb) = ((lo - a.1) / dy, (hi - a.1) / dy);
            t0 = t0.max(ta.min(tb));
            t1 = t1.min(ta.max(tb));
        }
        if t0 > t1 {
            if !current.is_empty() {
                pieces.push(std::mem::take(&mut current));
            }
            continue;
        }
        let at = |t: f64| (a.0 + t * (b.0 - a.0), a.1 + t * dy);
        let start = if t0 == 0.0 { a } else { at(t0) };
        let end = if t1 == 1.0 { b } else { at(t1) };
        if current.last() != Some(&start) {
            if !current.is_empty() {
                pieces.push(std::mem::take(&mut current));
            }
            current.push(start);
        }
        current.push(end);
        if t1 < 1.0 {
            pieces.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::atomic::{assert_only_file, file_names};
    use std::path::PathBuf;

    fn example() -> LineChart {
        LineChart::new(
            "Win rate vs. alpha-beta depth 2",
            "training step",
            "win rate",
        )
        .with_series(
            "mlp (ours)",
            (0..=10).map(|i| (i as f64 * 1000.0, 0.1 + 0.05 * i as f64)),
        )
        .with_series(
            "linear baseline",
            (0..=10).map(|i| (i as f64 * 1000.0, 0.1 + 0.02 * i as f64)),
        )
        .with_reference_line("thesis 0.30", 0.30)
        .with_y_range(0.0, 1.0)
    }

    /// Writes the example chart to `name` in a fresh directory with `write`,
    /// checks that no temporary file is left, and returns the directory
    /// (removed when dropped) and the file.
    fn write_example(
        name: &str,
        write: impl Fn(&LineChart, &Path) -> Result<(), ReportError>,
    ) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        write(&example(), &path).unwrap();
        assert_only_file(&path);
        (dir, path)
    }

    #[test]
    fn png_is_written_atomically_and_valid() {
        let (_dir, path) = write_example("curve.png", |c, p| c.write_png(p));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert!(bytes.len() > 5_000, "png only {} bytes", bytes.len());
        // IHDR: width and height, big-endian, right after the chunk header.
        assert_eq!(&bytes[12..16], b"IHDR");
        assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 800);
        assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 500);
    }

    #[test]
    fn svg_contains_series_names_and_reference_label() {
        let (_dir, path) = write_example("curve.svg", |c, p| c.write_svg(p));
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        assert!(svg.contains("width=\"800\"") && svg.contains("height=\"500\""));
        for needle in [
            "mlp (ours)",
            "linear baseline",
            "thesis 0.30",
            "training step",
        ] {
            assert!(svg.contains(needle), "svg lacks {needle:?}");
        }
    }

    #[test]
    fn empty_or_non_finite_charts_are_errors_and_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.png");
        let cases = [
            LineChart::new("t", "x", "y"),
            LineChart::new("t", "x", "y").with_series("empty", []),
            LineChart::new("t", "x", "y").with_series("nan", [(0.0, 1.0), (1.0, f64::NAN)]),
            LineChart::new("t", "x", "y").with_series("inf", [(f64::INFINITY, 1.0)]),
            example().with_reference_line("bad", f64::NAN),
            example().with_y_range(1.0, 1.0),
        ];
        for chart in cases {
            let err = chart.write_png(&path).unwrap_err();
            assert!(matches!(err, ReportError::InvalidChart { .. }), "{err:?}");
            assert_eq!(err.path(), path);
            assert!(err.to_string().contains("bad.png"), "{err}");
            assert!(chart.write_svg(dir.path().join("bad.svg")).is_err());
        }
        assert!(file_names(dir.path()).is_empty());
    }

    #[test]
    fn single_point_and_flat_series_render() {
        let dir = tempfile::tempdir().unwrap();
        let chart = LineChart::new("", "", "")
            .with_series("one", [(3.0, 0.0)])
            .with_series("flat", [(3.0, 0.0), (3.0, 0.0)]);
        chart.write_png(dir.path().join("p.png")).unwrap();
        chart.write_svg(dir.path().join("p.svg")).unwrap();
    }

    #[test]
    fn clip_polyline_cuts_at_bounds() {
        let pts = [(0.0, 0.0), (1.0, 2.0), (2.0, 0.0), (3.0, 0.5)];
        let pieces = clip_polyline(&pts, -1.0, 1.0);
        assert_eq!(
            pieces,
            vec![
                vec![(0.0, 0.0), (0.5, 1.0)],
                vec![(1.5, 1.0), (2.0, 0.0), (3.0, 0.5)]
            ]
        );
        assert!(clip_polyline(&[(0.0, 5.0), (1.0, 6.0)], 0.0, 1.0).is_empty());
        assert_eq!(clip_polyline(&pts, -10.0, 10.0), vec![pts.to_vec()]);
    }

    #[test]
    fn tick_labels_use_one_precision() {
        let f = tick_formatter(1.0);
        assert_eq!(f(&0.30000000000000004), "0.3");
        assert_eq!(f(&-0.0), "0.0");
        assert_eq!(tick_formatter(10_000.0)(&2500.0), "2500");
        assert_eq!(tick_formatter(0.35)(&0.05), "0.05");
    }

    /// Renders the example chart to `$PLIES_EXAMPLE_CHART` (e.g.
    /// `/tmp/example.png`) for eyeballing: a tool for people, not a check, so
    /// it runs only on request (`cargo test -- --ignored`).
    #[test]
    #[ignore = "renders a chart for a person to look at"]
    fn render_example_for_inspection() {
        if let Some(path) = std::env::var_os("PLIES_EXAMPLE_CHART") {
            let chart = example()
                .with_series(
                    "alpha-beta d1",
                    (0..=10).map(|i| (i as f64 * 1000.0, 0.45 + 0.01 * (i % 3) as f64)),
                )
                .with_series("overshoot", [(0.0, 0.9), (5000.0, 1.2), (10000.0, 0.95)])
                .with_reference_line("random 0.50", 0.5);
            chart.write_png(&path).unwrap();
            let mut svg = std::path::PathBuf::from(&path);
            svg.set_extension("svg");
            chart.write_svg(svg).unwrap();

            // A long title, negative values, large x and several reference
            // lines, as the experiment reports produce.
            let mut second = std::path::PathBuf::from(&path);
            second.set_file_name("example-2.png");
            let curve = |scale: f64, shift: f64| {
                (0..=12).map(move |i| {
                    let x = (i * 2500) as f64;
                    (x, shift + scale * (1.0 - (-x / 8000.0).exp()) - 0.8)
                })
            };
            let mut chart = LineChart::new(
                "Tic-tac-toe, Experiment I: equity of NETWORK against EXPERT (mean of 100 simulations)",
                "training examples (games against RANDOM)",
                "equity (w - l) / (w + l + d)",
            )
            .with_reference_line("Tesauro: best 0.42", 0.42)
            .with_reference_line("paper B: best -0.10", -0.10);
            for (h, (scale, shift)) in [(10, (1.0, 0.0)), (20, (1.2, 0.05)), (40, (1.3, 0.1))] {
                chart = chart.with_series(format!("{h} hidden"), curve(scale, shift));
            }
            chart.write_png(&second).unwrap();
        }
    }
}
