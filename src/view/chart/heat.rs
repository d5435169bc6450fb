//! Heat tables: a grid of values coloured by size, for one question over two dimensions.

use super::*;

/// One row of a [`HeatTable`]: its label and a value per column (`None` draws an empty cell).
#[derive(Debug, Clone, PartialEq)]
pub struct HeatRow {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// A grid of numbers, one row per item and one column per variant, each cell shaded by how far
/// its value is from `pivot` (blue below, red above): many small comparisons on one screen.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatTable {
    pub title: String,
    /// One line under the title: what the numbers are, their unit and counter.
    pub note: String,
    pub columns: Vec<String>,
    pub rows: Vec<HeatRow>,
    /// The neutral value (drawn white): 100 for "% of a baseline".
    pub pivot: f64,
    /// Legend entries for values below, at and above the pivot.
    pub below: String,
    pub at: String,
    pub above: String,
}

pub(super) const HEAT_BLUE: RGBColor = RGBColor(33, 102, 172);

pub(super) const HEAT_RED: RGBColor = RGBColor(178, 24, 43);

/// A cell's fill: white at the pivot, full colour at half or twice it (log scale).
pub(super) fn heat(v: f64, pivot: f64) -> (RGBColor, f64) {
    let t = if v > 0.0 && pivot > 0.0 {
        (v / pivot).log2().clamp(-1.0, 1.0)
    } else if v <= 0.0 {
        -1.0
    } else {
        1.0
    };
    let to = if t < 0.0 { HEAT_BLUE } else { HEAT_RED };
    let a = t.abs();
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * a).round() as u8;
    (RGBColor(mix(to.0), mix(to.1), mix(to.2)), a)
}

/// Where a heat table's parts go, in pixels.
struct Grid {
    margin: i32,
    label_w: i32,
    cell_w: i32,
    row_h: i32,
    top: i32,
    left: i32,
}

type Root<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = Result<(), ChartError>;

fn text_style(size: u32, color: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    (FONT, size).into_font().color(&color).pos(Pos::new(h, v))
}

use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Draws a [`HeatTable`]: row labels on the left, column names upright above the grid, the
/// value in every cell, and a legend under it.
pub fn heat_table(spec: &HeatTable) -> Result<String, ChartError> {
    let err = chart_err(&spec.title);
    let margin = 16i32;
    let label_px = f64::from(LABEL_SIZE);
    let cols = spec.columns.len().max(1) as i32;
    let widest = |texts: &mut dyn Iterator<Item = &String>| {
        texts
            .map(|t| text_width(t, label_px))
            .fold(0.0f64, f64::max)
            .ceil() as i32
    };
    let label_w = (widest(&mut spec.rows.iter().map(|r| &r.label)) + 12).min(WIDTH as i32 * 2 / 5);
    let header_h = widest(&mut spec.columns.iter()) + 10;
    let grid = Grid {
        margin,
        label_w,
        cell_w: (WIDTH as i32 - 2 * margin - label_w) / cols,
        row_h: 30,
        top: 84 + header_h,
        left: margin + label_w,
    };
    let grid_bottom = grid.top + grid.row_h * spec.rows.len() as i32;
    let height = (grid_bottom + 64) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        headings(&root, spec, &grid)?;
        for (i, row) in spec.rows.iter().enumerate() {
            draw_row(&root, spec, &grid, i, row)?;
        }
        // Grid lines between rows, so a long row is easy to follow across.
        for i in 0..=spec.rows.len() as i32 {
            let y = grid.top + grid.row_h * i;
            root.draw(&PathElement::new(
                vec![(margin, y), (grid.left + grid.cell_w * cols, y)],
                RGBColor(200, 200, 200),
            ))
            .map_err(|e| err(&e))?;
        }
        legend(&root, spec, margin, grid_bottom + 22)?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// The title, the note under it and the column names, upright above the grid.
fn headings(root: &Root<'_>, spec: &HeatTable, grid: &Grid) -> Drawn {
    let err = chart_err(&spec.title);
    let width = f64::from(WIDTH) - 2.0 * f64::from(grid.margin);
    let centre = WIDTH as i32 / 2;
    for (text, y, size) in [(&spec.title, 10, TITLE_SIZE), (&spec.note, 46, LABEL_SIZE)] {
        root.draw(&Text::new(
            text.as_str(),
            (centre, y),
            text_style(fitted(text, size, width), BLACK, HPos::Center, VPos::Top),
        ))
        .map_err(|e| err(&e))?;
    }
    for (j, name) in spec.columns.iter().enumerate() {
        let x = grid.left + grid.cell_w * j as i32 + grid.cell_w / 2;
        root.draw(&Text::new(
            name.as_str(),
            (x, grid.top - 6),
            (FONT, LABEL_SIZE)
                .into_font()
                .transform(FontTransform::Rotate270)
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(|e| err(&e))?;
    }
    Ok(())
}

/// One row: its label, and each cell coloured by its value with the value in it.
fn draw_row(root: &Root<'_>, spec: &HeatTable, grid: &Grid, i: usize, row: &HeatRow) -> Drawn {
    let err = chart_err(&spec.title);
    let y = grid.top + grid.row_h * i as i32;
    root.draw(&Text::new(
        row.label.as_str(),
        (grid.left - 10, y + grid.row_h / 2),
        text_style(
            fitted(&row.label, LABEL_SIZE, f64::from(grid.label_w - 12)),
            BLACK,
            HPos::Right,
            VPos::Center,
        ),
    ))
    .map_err(|e| err(&e))?;
    for (j, v) in row.values.iter().enumerate() {
        let x = grid.left + grid.cell_w * j as i32;
        let Some(v) = v.filter(|v| v.is_finite()) else {
            continue;
        };
        let (fill, strength) = heat(v, spec.pivot);
        root.draw(&Rectangle::new(
            [(x + 1, y + 1), (x + grid.cell_w - 1, y + grid.row_h - 1)],
            fill.filled(),
        ))
        .map_err(|e| err(&e))?;
        let ink = if strength > 0.6 { WHITE } else { BLACK };
        root.draw(&Text::new(
            thousands(v, 0),
            (x + grid.cell_w / 2, y + grid.row_h / 2),
            text_style(LABEL_SIZE, ink, HPos::Center, VPos::Center),
        ))
        .map_err(|e| err(&e))?;
    }
    Ok(())
}

/// The legend: a swatch for below, at and above the pivot, left to right.
fn legend(root: &Root<'_>, spec: &HeatTable, margin: i32, y: i32) -> Drawn {
    let err = chart_err(&spec.title);
    let mut x = margin;
    for (fill, name) in [
        (heat(spec.pivot / 2.0, spec.pivot).0, &spec.below),
        (RGBColor(255, 255, 255), &spec.at),
        (heat(spec.pivot * 2.0, spec.pivot).0, &spec.above),
    ] {
        root.draw(&Rectangle::new([(x, y), (x + 18, y + 18)], fill.filled()))
            .map_err(|e| err(&e))?;
        root.draw(&Rectangle::new(
            [(x, y), (x + 18, y + 18)],
            RGBColor(120, 120, 120),
        ))
        .map_err(|e| err(&e))?;
        root.draw(&Text::new(
            name.as_str(),
            (x + 26, y + 9),
            text_style(LABEL_SIZE, BLACK, HPos::Left, VPos::Center),
        ))
        .map_err(|e| err(&e))?;
        x += 26 + text_width(name, f64::from(LABEL_SIZE)).ceil() as i32 + 24;
    }
    Ok(())
}
