//! Grids of heatmaps (one panel per plane of a piece-square table) as PNG
//! or SVG, with each cell's value written in it.
//!
//! Each panel is coloured on its own scale, centred on its own mean: red
//! above, blue below, white at the mean, full colour at the panel's largest
//! deviation. A piece-square table's planes differ by orders of magnitude
//! (an elephant is worth twenty rabbits), so a shared scale would show
//! nothing but the elephant.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::{Deserialize, Serialize};

use super::plot::render_to;
use super::{font, DrawError, ReportError};
use crate::util::atomic::{write_atomic, write_atomic_with};

/// One panel: `rows x cols` values, row 0 drawn at the top.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Heatmap {
    pub name: String,
    pub rows: usize,
    pub cols: usize,
    /// Row-major, `rows * cols` finite values.
    pub values: Vec<f64>,
}

/// Panels in a grid, three to a row, under one title.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Heatmaps {
    pub title: String,
    /// Column labels (left to right) and row labels (top to bottom) drawn
    /// around every panel; empty for none.
    pub col_labels: Vec<String>,
    pub row_labels: Vec<String>,
    pub panels: Vec<Heatmap>,
}

const PANELS_PER_ROW: usize = 3;
const PANEL_SIZE: (u32, u32) = (400, 430);
const TITLE_HEIGHT: u32 = 50;

impl Heatmaps {
    /// Pixel size of the whole image.
    pub fn size(&self) -> (u32, u32) {
        let rows = self.panels.len().div_ceil(PANELS_PER_ROW).max(1) as u32;
        let cols = self.panels.len().clamp(1, PANELS_PER_ROW) as u32;
        (cols * PANEL_SIZE.0, rows * PANEL_SIZE.1 + TITLE_HEIGHT)
    }

    /// Renders the panels as a PNG at `path`, atomically.
    pub fn write_png(&self, path: impl AsRef<Path>) -> Result<(), ReportError> {
        let path = path.as_ref();
        self.check(path)?;
        let size = self.size();
        write_atomic_with(path, |tmp| {
            let root = BitMapBackend::new(tmp, size).into_drawing_area();
            render_to(path, &root, |root| self.draw(root))
        })
    }

    /// Renders the panels as an SVG at `path`, atomically.
    pub fn write_svg(&self, path: impl AsRef<Path>) -> Result<(), ReportError> {
        let path = path.as_ref();
        self.check(path)?;
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, self.size()).into_drawing_area();
            render_to(path, &root, |root| self.draw(root))?;
        }
        Ok(write_atomic(path, svg.as_bytes())?)
    }

    fn check(&self, path: &Path) -> Result<(), ReportError> {
        let invalid = |reason: String| ReportError::InvalidChart {
            path: path.to_path_buf(),
            reason,
        };
        if self.panels.is_empty() {
            return Err(invalid("no panels to draw".into()));
        }
        for p in &self.panels {
            if p.rows * p.cols != p.values.len() || p.values.is_empty() {
                return Err(invalid(format!(
                    "panel `{}` has {} values for {} x {} cells",
                    p.name,
                    p.values.len(),
                    p.rows,
                    p.cols
                )));
            }
            if p.values.iter().any(|v| !v.is_finite()) {
                return Err(invalid(format!(
                    "panel `{}` has a value that is not finite",
                    p.name
                )));
            }
        }
        Ok(())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        root.fill(&WHITE)?;
        let (title, body) = root.split_vertically(TITLE_HEIGHT);
        let centered = Pos::new(HPos::Center, VPos::Center);
        let (w, h) = title.dim_in_pixel();
        title.draw(&Text::new(
            self.title.clone(),
            (w as i32 / 2, h as i32 / 2),
            TextStyle::from((font::FAMILY, 22).into_font()).pos(centered),
        ))?;
        let rows = self.panels.len().div_ceil(PANELS_PER_ROW).max(1);
        let cols = self.panels.len().clamp(1, PANELS_PER_ROW);
        let areas = body.split_evenly((rows, cols));
        for (panel, area) in self.panels.iter().zip(areas) {
            self.draw_panel(panel, &area)?;
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        p: &Heatmap,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawError> {
        let (w, h) = area.dim_in_pixel();
        let centered = Pos::new(HPos::Center, VPos::Center);
        area.draw(&Text::new(
            p.name.clone(),
            (w as i32 / 2, 14),
            TextStyle::from((font::FAMILY, 18).into_font()).pos(centered),
        ))?;
        let margin = 24i32;
        let top = 30i32;
        let side = ((w as i32 - 2 * margin).min(h as i32 - top - margin)).max(1);
        let cell_w = side / p.cols as i32;
        let cell_h = side / p.rows as i32;
        let mean = p.values.iter().sum::<f64>() / p.values.len() as f64;
        let spread = p
            .values
            .iter()
            .map(|v| (v - mean).abs())
            .fold(0.0, f64::max);
        let value_font = (font::FAMILY, (cell_h / 3).clamp(8, 13)).into_font();
        for r in 0..p.rows {
            for c in 0..p.cols {
                let v = p.values[r * p.cols + c];
                let x = margin + c as i32 * cell_w;
                let y = top + r as i32 * cell_h;
                let t = if spread > 0.0 {
                    (v - mean) / spread
                } else {
                    0.0
                };
                area.draw(&Rectangle::new(
                    [(x, y), (x + cell_w, y + cell_h)],
                    diverging(t).filled(),
                ))?;
                area.draw(&Rectangle::new(
                    [(x, y), (x + cell_w, y + cell_h)],
                    RGBColor(200, 200, 200).stroke_width(1),
                ))?;
                area.draw(&Text::new(
                    format_cell(v),
                    (x + cell_w / 2, y + cell_h / 2),
                    TextStyle::from(value_font.clone()).pos(centered),
                ))?;
            }
        }
        let label_font = TextStyle::from((font::FAMILY, 12).into_font()).pos(centered);
        for (c, l) in self.col_labels.iter().take(p.cols).enumerate() {
            let x = margin + c as i32 * cell_w + cell_w / 2;
            area.draw(&Text::new(
                l.clone(),
                (x, top + p.rows as i32 * cell_h + 10),
                label_font.clone(),
            ))?;
        }
        for (r, l) in self.row_labels.iter().take(p.rows).enumerate() {
            let y = top + r as i32 * cell_h + cell_h / 2;
            area.draw(&Text::new(l.clone(), (margin / 2, y), label_font.clone()))?;
        }
        Ok(())
    }
}

/// White at 0, red towards +1, blue towards -1.
fn diverging(t: f64) -> RGBColor {
    let t = t.clamp(-1.0, 1.0);
    let fade = |full: u8, amount: f64| (255.0 - (255.0 - f64::from(full)) * amount).round() as u8;
    if t >= 0.0 {
        RGBColor(fade(214, t), fade(39, t), fade(40, t))
    } else {
        RGBColor(fade(31, -t), fade(119, -t), fade(180, -t))
    }
}

/// A cell's value in at most five characters where it can be.
fn format_cell(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maps() -> Heatmaps {
        Heatmaps {
            title: "t".into(),
            col_labels: vec!["a".into(), "b".into()],
            row_labels: vec!["2".into(), "1".into()],
            panels: vec![
                Heatmap {
                    name: "low".into(),
                    rows: 2,
                    cols: 2,
                    values: vec![1.0, 2.0, 3.0, 4.0],
                },
                Heatmap {
                    name: "high".into(),
                    rows: 2,
                    cols: 2,
                    values: vec![2000.0, 2100.0, 1900.0, 2000.0],
                },
            ],
        }
    }

    #[test]
    fn panels_render_with_their_values_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let svg = dir.path().join("h.svg");
        maps().write_svg(&svg).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        for label in ["low", "high", "2100", "2.0", "a", "2"] {
            assert!(text.contains(&format!("\n{label}\n")), "{label}: {text}");
        }
        let png = dir.path().join("h.png");
        maps().write_png(&png).unwrap();
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
        let mut bad = maps();
        bad.panels[1].values.pop();
        let e = bad.write_svg(dir.path().join("bad.svg")).unwrap_err();
        assert!(e.to_string().contains("panel `high` has 3 values"), "{e}");
    }

    #[test]
    fn colours_diverge_from_white() {
        assert_eq!(diverging(0.0), RGBColor(255, 255, 255));
        assert_eq!(diverging(1.0), RGBColor(214, 39, 40));
        assert_eq!(diverging(-1.0), RGBColor(31, 119, 180));
    }
}
