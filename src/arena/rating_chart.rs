//! The rating list as a chart: one row per player, best at the top, a dot
//! at the rating and a bar across its 95% interval, a dashed line at 0.

use crate::report::{font, render_to, DrawError, ReportError};
use crate::util::atomic::write_atomic_with;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// One player's row.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingBar {
    pub name: String,
    pub elo: f64,
    pub lo: f64,
    pub hi: f64,
}

const WIDTH: u32 = 900;
const BAR: RGBColor = RGBColor(31, 119, 180);
const ZERO: RGBColor = RGBColor(90, 90, 90);

/// Writes the chart of `bars` (drawn top to bottom in the order given) as
/// a PNG at `path`, through a temporary file renamed into place.
pub fn write_ratings_png(path: &Path, title: &str, bars: &[RatingBar]) -> Result<(), ReportError> {
    let invalid = |reason: String| ReportError::InvalidChart {
        path: path.to_path_buf(),
        reason,
    };
    if bars.is_empty() {
        return Err(invalid("no ratings to draw".into()));
    }
    if let Some(b) = bars
        .iter()
        .find(|b| !(b.elo.is_finite() && b.lo.is_finite() && b.hi.is_finite()))
    {
        return Err(invalid(format!("rating of `{}` is not finite", b.name)));
    }
    let height = (130 + 50 * bars.len() as u32).max(300);
    write_atomic_with(path, |tmp| {
        let root = BitMapBackend::new(tmp, (WIDTH, height)).into_drawing_area();
        render_to(path, &root, |root| draw(root, title, bars))
    })
}

/// The caption and its font size: the title at the largest size from 20
/// down to 12 that fits the chart's width (an arena's title names its
/// anchor, which can be a long spec), else cut at a word with an ellipsis.
fn fit_caption<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> (String, u32) {
    let room = WIDTH - 40;
    let width = |text: &str, size: u32| {
        root.estimate_text_size(text, &TextStyle::from((font::FAMILY, size).into_font()))
            .map(|(w, _)| w)
            .unwrap_or(u32::MAX)
    };
    for size in (12..=20).rev().step_by(2) {
        if width(title, size) <= room {
            return (title.to_string(), size);
        }
    }
    let words: Vec<&str> = title.split(' ').collect();
    for keep in (1..words.len()).rev() {
        let cut = format!("{} ...", words[..keep].join(" "));
        if width(&cut, 12) <= room {
            return (cut, 12);
        }
    }
    (title.to_string(), 12)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    bars: &[RatingBar],
) -> Result<(), DrawError> {
    let n = bars.len();
    let lo = bars.iter().map(|b| b.lo).fold(0.0f64, f64::min);
    let hi = bars.iter().map(|b| b.hi).fold(0.0f64, f64::max);
    let pad = ((hi - lo) * 0.06).max(10.0);
    let (x0, x1) = (lo - pad, hi + pad);

    // Room on the left for the longest name.
    let label_style = TextStyle::from((font::FAMILY, 15).into_font());
    let widest = bars
        .iter()
        .filter_map(|b| root.estimate_text_size(&b.name, &label_style).ok())
        .map(|(w, _)| w)
        .max()
        .unwrap_or(60);
    let label_area = (widest + 20).min(WIDTH / 2);

    root.fill(&WHITE)?;
    let (caption, caption_size) = fit_caption(root, title);
    let mut chart = ChartBuilder::on(root)
        .margin(16)
        .caption(caption, (font::FAMILY, caption_size))
        .x_label_area_size(50)
        .y_label_area_size(label_area)
        .build_cartesian_2d(x0..x1, (0..n - 1).into_segmented())?;
    // `0..n - 1` makes n segments; segment i (counted from the bottom)
    // holds bars[n - 1 - i].
    let name_of = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) if *i < n => bars[n - 1 - i].name.clone(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .x_desc("Elo (95% interval)")
        .axis_desc_style((font::FAMILY, 17))
        .label_style((font::FAMILY, 15))
        .y_labels(n)
        .y_label_formatter(&name_of)
        .x_label_formatter(&|v: &f64| format!("{v:.0}"))
        .disable_y_mesh()
        .bold_line_style(BLACK.mix(0.12))
        // No light lines: `max_light_lines(0)` never returns on a segmented axis.
        .light_line_style(TRANSPARENT)
        .axis_style(BLACK.mix(0.8))
        .draw()?;

    let centre = |k: usize| SegmentValue::CenterOf(n - 1 - k);
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(0.0, SegmentValue::Exact(0)), (0.0, SegmentValue::Last)],
        ZERO.mix(0.7).stroke_width(1),
    )))?;
    let style = BAR.stroke_width(2);
    for (k, b) in bars.iter().enumerate() {
        let y = centre(k);
        let cap = |x: f64| {
            EmptyElement::at((x, y.clone())) + PathElement::new(vec![(0, -7), (0, 7)], style)
        };
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(b.lo, y.clone()), (b.hi, y.clone())],
            style,
        )))?;
        chart.draw_series([cap(b.lo), cap(b.hi)])?;
        let value = TextStyle::from((font::FAMILY, 14).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(std::iter::once(
            EmptyElement::at((b.elo, y.clone()))
                + Circle::new((0, 0), 5, BAR.filled())
                + Text::new(crate::arena::fmt_elo(b.elo), (0, -9), value),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_png_and_refuses_non_finite_ratings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out").join("ratings.png");
        let bars = vec![
            RatingBar {
                name: "alphabeta:depth=2,eval=mindist".into(),
                elo: 250.0,
                lo: 180.0,
                hi: 320.0,
            },
            RatingBar {
                name: "random".into(),
                elo: 0.0,
                lo: 0.0,
                hi: 0.0,
            },
        ];
        write_ratings_png(&path, "Elo ratings", &bars).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert!(bytes.len() > 3000);
        crate::util::atomic::assert_only_file(&path);
        write_ratings_png(&path, "one player", &bars[1..]).unwrap();
        let mut bad = bars.clone();
        bad[0].hi = f64::INFINITY;
        assert!(write_ratings_png(&path, "t", &bad).is_err());
        assert!(write_ratings_png(&path, "t", &[]).is_err());
    }

    #[test]
    fn a_long_title_is_shrunk_then_cut_to_fit_the_chart() {
        font::ensure_registered().unwrap();
        let mut buffer = vec![0u8; (WIDTH * 300 * 3) as usize];
        let root = BitMapBackend::with_buffer(&mut buffer, (WIDTH, 300)).into_drawing_area();
        let short = "arimaa 8x8: Elo";
        assert_eq!(fit_caption(&root, short), (short.to_string(), 20));
        // The arena's title with a long anchor spec, as the Arimaa engine
        // ladder drew it (cut off at both sides at size 20).
        let ladder = "arimaa 8x8: Elo, up to 20 games per pair, decided pairs stopped \
                      (120 games) (alphabeta:depth=1,eval=material = 0)";
        let (text, size) = fit_caption(&root, ladder);
        assert_eq!(text, ladder);
        assert!(size < 20, "{size}");
        let endless = ["a spec with many words"; 20].join(" ");
        let (text, size) = fit_caption(&root, &endless);
        assert_eq!(size, 12);
        assert!(
            text.ends_with(" ...") && text.len() < endless.len(),
            "{text}"
        );
    }
}
