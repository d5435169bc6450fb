//! SVG charts: pure functions from finished numbers to an SVG document (`String`).
//!
//! Everything is drawn with plotters' SVG backend, which writes `<text>` elements and needs no
//! system fonts; the viewer's sans-serif font renders them. Sizes are chosen to stay readable
//! when GitHub scales the image down to its column width: at least 960×540, tick labels 15 px,
//! axis titles 18 px, every axis titled with its unit, numbers with thousands separators.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::number::thousands;

mod line;
pub use line::*;

mod bars;
pub use bars::*;

mod heat;
pub use heat::*;

/// Default canvas. GitHub shows images at ≤ 880 px wide, so text stays ≥ 14 px on screen.
pub const WIDTH: u32 = 960;
pub const HEIGHT: u32 = 540;

const FONT: &str = "sans-serif";
// Plotters' SVG backend writes `font-size` = given size / 1.24, so these give 22.6 px titles,
// 17.7 px axis titles and 15.3 px tick labels and legends in the file.
const TITLE_SIZE: u32 = 28;
const AXIS_TITLE_SIZE: u32 = 22;
const LABEL_SIZE: u32 = 19;
const SMALL_SIZE: u32 = 18;

/// Tableau-10: distinct hues that stay distinguishable for the common colour-vision deficiencies
/// better than plotters' primary colours.
pub const PALETTE: [RGBColor; 10] = [
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

/// A chart could not be drawn (a backend error; the SVG backend writes to memory, so in
/// practice only impossible coordinates get here).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw chart {title:?}: {message}")]
pub struct ChartError {
    pub title: String,
    pub message: String,
}

/// One named line.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (e.g. a modelled reference line rather than a measurement).
    pub dashed: bool,
    /// A limit drawn for orientation (a context window): dark grey, dashed, no markers, and
    /// it takes no colour from the palette.
    pub reference: bool,
    /// A fixed palette index, so one series keeps its colour across charts.
    pub color: Option<usize>,
    /// Points only, no line (a scatter of independent observations).
    pub scatter: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            dashed: false,
            reference: false,
            color: None,
            scatter: false,
        }
    }

    pub fn scatter(mut self) -> Series {
        self.scatter = true;
        self
    }

    pub fn colored(mut self, palette_index: usize) -> Series {
        self.color = Some(palette_index);
        self
    }

    pub fn reference(mut self) -> Series {
        self.dashed = true;
        self.reference = true;
        self
    }

    pub fn dashed(mut self) -> Series {
        self.dashed = true;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    #[default]
    Linear,
    /// Base-10 logarithmic; non-positive values are left out of the drawing.
    Log,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LegendAt {
    #[default]
    UpperLeft,
    UpperRight,
    LowerLeft,
    LowerRight,
}

/// A line chart with any number of named series.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    /// Axis titles, units included ("catalog size (tools)").
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// Fixed y range (e.g. 0..1 for recall); otherwise fitted to the data.
    pub y_range: Option<(f64, f64)>,
    /// Tick labels on x are whole numbers (request numbers, k).
    pub x_integer: bool,
    pub legend: LegendAt,
}

impl LineChart {
    pub fn new(title: &str, x_label: &str, y_label: &str, series: Vec<Series>) -> LineChart {
        LineChart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series,
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            y_range: None,
            x_integer: false,
            legend: LegendAt::UpperLeft,
        }
    }
}

/// One stacked bar: its label and the height of each part, in `StackedBars::parts` order.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub values: Vec<f64>,
}

/// A panel of stacked bars (e.g. every request of the eager run).
#[derive(Debug, Clone, PartialEq)]
pub struct BarPanel {
    pub title: String,
    pub bars: Vec<Bar>,
}

/// Panels of stacked bars drawn one above the other on the same y scale, so their heights
/// compare directly (eager above, deferred below).
#[derive(Debug, Clone, PartialEq)]
pub struct StackedBars {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Names of the stacked parts, bottom first; the legend lists them.
    pub parts: Vec<String>,
    pub panels: Vec<BarPanel>,
}

/// Tick label: enough decimals for the axis span, thousands separators, and a compact form
/// (`10k`, `1.5M`) once numbers get long enough to crowd each other, the same form for every
/// tick of an axis (`50k` beside `150k`, not `50,000`).
fn tick(x: f64, span: f64) -> String {
    let a = x.abs();
    if a >= 1e6 || (span >= 2e6 && a >= 1e5) {
        return format!("{}M", thousands(x / 1e6, 1));
    }
    if a >= 1e5 || (span >= 1e5 && a >= 1e3) {
        return format!("{}k", thousands(x / 1e3, 0));
    }
    let decimals = if span >= 10.0 {
        0
    } else if span >= 1.0 {
        1
    } else if span >= 0.1 {
        2
    } else {
        3
    };
    thousands(x, decimals)
}

/// Estimated advance width in px of `text` drawn at plotters font size `size` (the file's
/// font-size is `size / 1.24`), with glyph widths at least DejaVu Sans's, the widest common
/// sans-serif, so text fitted by it fits in the viewer's face too.
pub fn text_width(text: &str, size: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            ' ' => 0.32,
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.3,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.42,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 1.0,
            'A'..='Z' => 0.76,
            'a'..='z' => 0.62,
            _ => 0.64,
        })
        .sum();
    em * size / 1.24
}

/// The largest plotters font size up to `size` (and not below 60% of it) at which `text`
/// fits in `width` px.
fn fitted(text: &str, size: u32, width: f64) -> u32 {
    let min = size * 3 / 5;
    (min..=size)
        .rev()
        .find(|&s| text_width(text, f64::from(s)) <= width)
        .unwrap_or(min)
}

/// Pixels between a title and the plot below it, so the top tick label (centred on the plot's
/// top edge) stays clear of the title.
const TITLE_GAP: u32 = 14;

/// Draws `title` centred at the top of `area`, shrunk to fit its width, and returns the area
/// below it.
fn titled<'a>(
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    size: u32,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, DrawingAreaErrorKind<std::io::Error>> {
    let width = f64::from(area.dim_in_pixel().0) - 32.0;
    area.titled(title, (FONT, fitted(title, size, width)))
}

fn chart_err(title: &str) -> impl Fn(&dyn std::fmt::Display) -> ChartError + '_ {
    move |e| ChartError {
        title: title.to_string(),
        message: e.to_string(),
    }
}

/// A padded (lo, hi) covering `values`, from 0 on linear scales when all values are positive,
/// so bar-like comparisons are not exaggerated.
fn fit_range(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return match scale {
            Scale::Linear => (0.0, 1.0),
            Scale::Log => (1.0, 10.0),
        };
    }
    match scale {
        Scale::Linear => {
            let lo = lo.min(0.0);
            let hi = if hi <= lo { lo + 1.0 } else { hi };
            (lo, hi + (hi - lo) * 0.08)
        }
        Scale::Log => {
            // Whole decades, so the log axis gets round tick labels.
            let lo = 10f64.powf(lo.log10().floor());
            let mut hi = 10f64.powf(hi.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
            (lo, hi)
        }
    }
}

fn legend_position(at: LegendAt) -> SeriesLabelPosition {
    match at {
        LegendAt::UpperLeft => SeriesLabelPosition::UpperLeft,
        LegendAt::UpperRight => SeriesLabelPosition::UpperRight,
        LegendAt::LowerLeft => SeriesLabelPosition::LowerLeft,
        LegendAt::LowerRight => SeriesLabelPosition::LowerRight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_stay_short() {
        assert_eq!(tick(2_500_000.0, 1e7), "2.5M");
        assert_eq!(tick(250_000.0, 1e6), "250k");
        assert_eq!(tick(25_000.0, 5e4), "25,000");
        // One form per axis: 50,000 on an axis that reaches 150,000 is 50k.
        assert_eq!(tick(50_000.0, 1.6e5), "50k");
        assert_eq!(tick(500_000.0, 3e6), "0.5M");
        assert_eq!(tick(0.26, 1.0), "0.3");
        assert_eq!(tick(0.25, 0.5), "0.25");
    }

    #[test]
    fn log_range_snaps_to_decades() {
        assert_eq!(
            fit_range([12.0, 9000.0].into_iter(), Scale::Log),
            (10.0, 10000.0)
        );
        assert_eq!(fit_range(std::iter::empty(), Scale::Log), (1.0, 10.0));
        let (lo, hi) = fit_range([5.0, 10.0].into_iter(), Scale::Linear);
        assert_eq!(lo, 0.0);
        assert!(hi > 10.0);
    }

    #[test]
    fn line_chart_names_every_series() {
        let mut spec = LineChart::new(
            "t",
            "catalog size (tools)",
            "tokens",
            vec![
                Series::new("eager", vec![(10.0, 100.0), (10000.0, 1e6)]),
                Series::new("deferred", vec![(10.0, 50.0), (10000.0, 900.0)]).dashed(),
            ],
        );
        spec.x_scale = Scale::Log;
        spec.y_scale = Scale::Log;
        let svg = line_chart(&spec).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("\neager\n") && svg.contains("\ndeferred\n"));
        assert!(svg.contains("catalog size (tools)"));
    }

    #[test]
    fn a_dashed_series_has_a_dashed_swatch() {
        let swatches = |dashed: bool| {
            let mut b = Series::new("b", vec![(1.0, 2.0), (2.0, 3.0)]).colored(0);
            b.dashed = dashed;
            let spec = LineChart::new(
                "t",
                "x",
                "y",
                vec![Series::new("a", vec![(1.0, 1.0), (2.0, 2.0)]).colored(0), b],
            );
            let svg = line_chart(&spec).unwrap();
            // Legend swatches are the only horizontal two-point polylines 3 px wide (the data
            // lines slope).
            let short = |len: i32| {
                svg.lines()
                    .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"3\""))
                    .filter(|l| {
                        let v: Vec<i32> = l
                            .split("points=\"")
                            .nth(1)
                            .and_then(|p| p.split('"').next())
                            .map(|p| {
                                p.split([' ', ','])
                                    .filter(|v| !v.is_empty())
                                    .filter_map(|v| v.parse().ok())
                                    .collect()
                            })
                            .unwrap_or_default();
                        v.len() == 4 && v[1] == v[3] && v[2] - v[0] == len
                    })
                    .count()
            };
            (short(12), short(9))
        };
        // Solid: both swatches are two 12 px halves; dashed: the second is two 9 px dashes.
        assert_eq!(swatches(false), (4, 0));
        assert_eq!(swatches(true), (2, 2));
    }

    #[test]
    fn a_heat_table_writes_every_value_and_its_legend() {
        let spec = HeatTable {
            title: "t".into(),
            note: "n".into(),
            columns: vec!["a".into(), "b".into()],
            rows: vec![
                HeatRow {
                    label: "one".into(),
                    values: vec![Some(50.0), Some(200.0)],
                },
                HeatRow {
                    label: "two".into(),
                    values: vec![Some(100.0), None],
                },
            ],
            pivot: 100.0,
            below: "less".into(),
            at: "same".into(),
            above: "more".into(),
        };
        let svg = heat_table(&spec).unwrap();
        for t in ["one", "two", "50", "200", "100", "less", "same", "more"] {
            assert!(svg.contains(&format!("\n{t}\n")), "{t}");
        }
        // Full blue at half the pivot, full red at twice it, white at it.
        assert_eq!(heat(50.0, 100.0).0, HEAT_BLUE);
        assert_eq!(heat(200.0, 100.0).0, HEAT_RED);
        assert_eq!(heat(100.0, 100.0).0, RGBColor(255, 255, 255));
        assert_eq!(heat(0.0, 100.0).0, HEAT_BLUE);
    }

    #[test]
    fn titles_shrink_to_fit() {
        let long =
            "Cumulative cost per 1,000 conversations: published-qwen-code-toolsearch-analysis";
        let size = fitted(long, TITLE_SIZE, 928.0);
        assert!(size < TITLE_SIZE && text_width(long, f64::from(size)) <= 928.0);
        assert_eq!(fitted("short", TITLE_SIZE, 928.0), TITLE_SIZE);
    }

    #[test]
    fn empty_and_degenerate_inputs_still_draw() {
        let spec = LineChart::new("empty", "x", "y", vec![Series::new("none", vec![])]);
        assert!(line_chart(&spec).is_ok());
        let one = LineChart::new("one", "x", "y", vec![Series::new("p", vec![(3.0, 3.0)])]);
        assert!(line_chart(&one).is_ok());
        let bars = StackedBars {
            title: "b".into(),
            x_label: "request".into(),
            y_label: "tokens".into(),
            parts: vec!["a".into()],
            panels: vec![],
        };
        assert!(stacked_bars(&bars).is_ok());
    }
}
