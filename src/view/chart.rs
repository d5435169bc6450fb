//! SVG charts: pure functions from finished numbers to an SVG document (`String`).
//!
//! Everything is drawn with plotters' SVG backend, which writes `<text>` elements and needs no
//! system fonts; the viewer's sans-serif font renders them. Sizes are chosen to stay readable
//! when GitHub scales the image down to its column width: at least 960×540, tick labels 15 px,
//! axis titles 18 px, every axis titled with its unit, numbers with thousands separators.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::number::thousands;

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

/// Draws a line chart. Each series gets its own colour (the palette in order) and point
/// markers, so a series with a single point still shows.
pub fn line_chart(spec: &LineChart) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw_line_chart(&root, spec)?;
        root.present().map_err(|e| chart_err(&spec.title)(&e))?;
    }
    Ok(svg)
}

fn draw_line_chart(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    spec: &LineChart,
) -> Result<(), ChartError> {
    let err = chart_err(&spec.title);
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let xs = spec
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = spec
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = {
        let (lo, hi) = fit_range(xs, spec.x_scale);
        match spec.x_scale {
            // Lines start at the first x, not at 0.
            Scale::Linear => {
                let min = spec
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0))
                    .fold(f64::INFINITY, f64::min);
                let max = spec
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0))
                    .fold(f64::NEG_INFINITY, f64::max);
                if min.is_finite() && max > min {
                    let pad = (max - min) * 0.03;
                    (min - pad, max + pad)
                } else if min.is_finite() {
                    (min - 1.0, min + 1.0)
                } else {
                    (lo, hi)
                }
            }
            Scale::Log => (lo, hi),
        }
    };
    let (y0, y1) = spec.y_range.unwrap_or_else(|| fit_range(ys, spec.y_scale));
    let area = titled(&root.margin(12, 0, 0, 0), &spec.title, TITLE_SIZE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&area);
    builder
        .margin(16)
        .margin_top(TITLE_GAP)
        .margin_right(32)
        .x_label_area_size(64)
        .y_label_area_size(100);
    // Axis titles shrink to the plot's width and height (less the label areas and margins).
    let axis_size = fitted(&spec.x_label, AXIS_TITLE_SIZE, f64::from(WIDTH) - 160.0).min(fitted(
        &spec.y_label,
        AXIS_TITLE_SIZE,
        f64::from(HEIGHT) - 160.0,
    ));
    let keep = |s: Scale, v: f64| s == Scale::Linear || v > 0.0;
    // Plotters fixes the coordinate type per scale, so each combination is its own branch;
    // the drawing code after it is shared through a macro.
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart.map_err(|e| err(&e))?;
            let (xspan, yspan) = (x1 - x0, y1 - y0);
            let x_integer = spec.x_integer;
            let x_fmt = move |v: &f64| {
                if x_integer {
                    if (v - v.round()).abs() < 1e-9 {
                        thousands(*v, 0)
                    } else {
                        String::new()
                    }
                } else {
                    tick(*v, xspan)
                }
            };
            let y_fmt = move |v: &f64| tick(*v, yspan);
            chart
                .configure_mesh()
                .x_desc(spec.x_label.as_str())
                .y_desc(spec.y_label.as_str())
                .label_style((FONT, LABEL_SIZE))
                .axis_desc_style((FONT, axis_size))
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .x_labels(if x_integer {
                    (xspan.round() as usize + 1).clamp(2, 12)
                } else {
                    10
                })
                .y_labels(8)
                .light_line_style(RGBColor(235, 235, 235))
                .bold_line_style(RGBColor(200, 200, 200))
                .draw()
                .map_err(|e| err(&e))?;
            let mut next_color = 0;
            for series in &spec.series {
                let color = if series.reference {
                    RGBColor(90, 90, 90)
                } else if let Some(i) = series.color {
                    PALETTE[i % PALETTE.len()]
                } else {
                    next_color += 1;
                    PALETTE[(next_color - 1) % PALETTE.len()]
                };
                let points: Vec<(f64, f64)> = series
                    .points
                    .iter()
                    .copied()
                    .filter(|(x, y)| {
                        x.is_finite()
                            && y.is_finite()
                            && keep(spec.x_scale, *x)
                            && keep(spec.y_scale, *y)
                    })
                    .collect();
                let style = color.stroke_width(3);
                let anno = if series.scatter {
                    chart
                        .draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))
                        .map_err(|e| err(&e))?
                } else if series.reference {
                    chart
                        .draw_series(DashedLineSeries::new(points, 10, 6, color.stroke_width(2)))
                        .map_err(|e| err(&e))?
                } else if series.dashed {
                    if points.len() <= MAX_MARKED_POINTS {
                        chart
                            .draw_series(points.iter().map(|p| Circle::new(*p, 4, color.filled())))
                            .map_err(|e| err(&e))?;
                    }
                    chart
                        .draw_series(DashedLineSeries::new(points, 10, 6, style))
                        .map_err(|e| err(&e))?
                } else {
                    // Markers help a few points stand out but clutter a long series.
                    let marker = if points.len() <= MAX_MARKED_POINTS {
                        4
                    } else {
                        0
                    };
                    chart
                        .draw_series(LineSeries::new(points, style).point_size(marker))
                        .map_err(|e| err(&e))?
                };
                // A dashed series gets a dashed swatch, so two series of one colour (cached
                // and not) stay apart in the legend. Two segments either way (one element
                // type); a solid swatch joins them.
                let (a, b) = if series.dashed { (9, 15) } else { (12, 12) };
                let anno = anno.label(series.name.as_str());
                if series.scatter {
                    // A scatter's swatch is its marker.
                    anno.legend(move |(x, y)| Circle::new((x + 12, y), 4, color.filled()));
                } else {
                    anno.legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (a, 0)], color.stroke_width(3))
                            + PathElement::new(vec![(b, 0), (24, 0)], color.stroke_width(3))
                    });
                }
            }
            chart
                .configure_series_labels()
                .position(legend_position(spec.legend))
                .background_style(WHITE.mix(0.9))
                .border_style(RGBColor(160, 160, 160))
                .label_font((FONT, LABEL_SIZE))
                .margin(12)
                .draw()
                .map_err(|e| err(&e))?;
        }};
    }
    match (spec.x_scale, spec.y_scale) {
        (Scale::Linear, Scale::Linear) => draw!(builder.build_cartesian_2d(x0..x1, y0..y1)),
        (Scale::Log, Scale::Linear) => {
            draw!(builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1));
        }
        (Scale::Linear, Scale::Log) => {
            draw!(builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale()));
        }
        (Scale::Log, Scale::Log) => {
            draw!(builder.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale()));
        }
    }
    Ok(())
}

/// Draws panels of stacked bars, one above the other, sharing the y scale and the x extent.
pub fn stacked_bars(spec: &StackedBars) -> Result<String, ChartError> {
    let err = chart_err(&spec.title);
    let panels = spec.panels.len().max(1);
    let height = (HEIGHT as usize).max(120 + 330 * panels) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let root = titled(&root, &spec.title, TITLE_SIZE).map_err(|e| err(&e))?;
        let y_max = spec
            .panels
            .iter()
            .flat_map(|p| p.bars.iter())
            .map(|b| b.values.iter().filter(|v| v.is_finite()).sum::<f64>())
            .fold(0.0f64, f64::max);
        let y_max = if y_max > 0.0 { y_max * 1.12 } else { 1.0 };
        let n_max = spec
            .panels
            .iter()
            .map(|p| p.bars.len())
            .max()
            .unwrap_or(0)
            .max(1);
        // The legend gets its own column so it never covers a bar, as wide as its longest name.
        let legend_width = spec
            .parts
            .iter()
            .map(|p| text_width(p, f64::from(LABEL_SIZE)))
            .fold(0.0f64, f64::max)
            .ceil() as u32
            + 52;
        let legend_width = legend_width.clamp(LEGEND_WIDTH, WIDTH / 3);
        let (plot, side) = root.split_horizontally(WIDTH - legend_width);
        // Room per bar: the plot column less the y label area and the margins.
        let spacing = f64::from(WIDTH - legend_width - 100 - 12 - 32) / n_max as f64;
        let fits = |texts: Vec<String>, size: u32| {
            texts
                .iter()
                .all(|t| text_width(t, f64::from(size)) + 6.0 <= spacing)
        };
        // Every bar labelled when there are few enough and their labels fit side by side;
        // otherwise about a dozen ticks, each naming the bar nearest it.
        let exact = n_max <= MAX_LABELLED_BARS
            && fits(
                spec.panels
                    .iter()
                    .flat_map(|p| p.bars.iter().map(|b| b.label.clone()))
                    .collect(),
                LABEL_SIZE,
            );
        // Totals above the bars only when every total fits its bar's width.
        let totals = n_max <= MAX_LABELLED_BARS
            && fits(
                spec.panels
                    .iter()
                    .flat_map(|p| {
                        p.bars
                            .iter()
                            .map(|b| thousands(b.values.iter().filter(|v| v.is_finite()).sum(), 0))
                    })
                    .collect(),
                SMALL_SIZE,
            );
        draw_side_legend(&side, &spec.parts).map_err(|e| err(&e))?;
        let areas = plot.split_evenly((panels, 1));
        for (pi, (area, panel)) in areas.iter().zip(&spec.panels).enumerate() {
            let last = pi + 1 == spec.panels.len();
            let area = titled(area, &panel.title, AXIS_TITLE_SIZE + 2).map_err(|e| err(&e))?;
            // The y title stands along one panel: it shrinks to fit the panel's plot height.
            let plot_h =
                f64::from(area.dim_in_pixel().1) - f64::from(if last { 60 } else { 36 }) - 30.0;
            let axis_size = fitted(&spec.y_label, AXIS_TITLE_SIZE, plot_h).min(fitted(
                &spec.x_label,
                AXIS_TITLE_SIZE,
                f64::from(WIDTH) - 160.0,
            ));
            let mut chart = ChartBuilder::on(&area)
                .margin(12)
                .margin_top(TITLE_GAP)
                .margin_right(32)
                .x_label_area_size(if last { 60 } else { 36 })
                .y_label_area_size(100)
                .build_cartesian_2d(0.0..n_max as f64, 0.0..y_max)
                .map_err(|e| err(&e))?;
            let labels: Vec<String> = panel.bars.iter().map(|b| b.label.clone()).collect();
            let x_fmt = move |v: &f64| {
                // Bars sit at i + 0.5; label the bar whose centre this tick is (or, on a long
                // conversation where ticks cannot match every bar, the nearest bar).
                let i = (v - 0.5).round();
                if (!exact || (v - 0.5 - i).abs() < 1e-6) && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            };
            let y_fmt = move |v: &f64| tick(*v, y_max);
            let mut mesh = chart.configure_mesh();
            mesh.y_desc(spec.y_label.as_str())
                .label_style((FONT, LABEL_SIZE))
                .axis_desc_style((FONT, axis_size))
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .y_labels(6)
                .disable_x_mesh()
                .bold_line_style(RGBColor(200, 200, 200))
                .light_line_style(RGBColor(235, 235, 235));
            // Tick positions at bar centres: plotters places x ticks evenly over the range,
            // so ask for one per bar (capped, to avoid crowding long conversations).
            mesh.x_labels(if exact { n_max * 2 + 1 } else { 12 });
            if last {
                mesh.x_desc(spec.x_label.as_str());
            }
            mesh.draw().map_err(|e| err(&e))?;
            for part in 0..spec.parts.len() {
                let color = PALETTE[part % PALETTE.len()];
                let rects: Vec<Rectangle<(f64, f64)>> = panel
                    .bars
                    .iter()
                    .enumerate()
                    .filter_map(|(i, bar)| {
                        let below: f64 = bar.values[..part.min(bar.values.len())]
                            .iter()
                            .filter(|v| v.is_finite())
                            .sum();
                        let v = bar.values.get(part).copied().unwrap_or(0.0);
                        (v.is_finite() && v > 0.0).then(|| {
                            Rectangle::new(
                                [(i as f64 + 0.15, below), (i as f64 + 0.85, below + v)],
                                color.filled(),
                            )
                        })
                    })
                    .collect();
                chart.draw_series(rects).map_err(|e| err(&e))?;
            }
            // Totals above each bar, when they fit.
            if totals {
                let totals: Vec<Text<'_, (f64, f64), String>> = panel
                    .bars
                    .iter()
                    .enumerate()
                    .map(|(i, b)| {
                        let total: f64 = b.values.iter().filter(|v| v.is_finite()).sum();
                        Text::new(
                            thousands(total, 0),
                            (i as f64 + 0.5, total + y_max * 0.01),
                            (FONT, SMALL_SIZE).into_font().color(&BLACK).pos(
                                plotters::style::text_anchor::Pos::new(
                                    plotters::style::text_anchor::HPos::Center,
                                    plotters::style::text_anchor::VPos::Bottom,
                                ),
                            ),
                        )
                    })
                    .collect();
                chart.draw_series(totals).map_err(|e| err(&e))?;
            }
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

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

const BLUE: RGBColor = RGBColor(33, 102, 172);
const RED: RGBColor = RGBColor(178, 24, 43);

/// A cell's fill: white at the pivot, full colour at half or twice it (log scale).
fn heat(v: f64, pivot: f64) -> (RGBColor, f64) {
    let t = if v > 0.0 && pivot > 0.0 {
        (v / pivot).log2().clamp(-1.0, 1.0)
    } else if v <= 0.0 {
        -1.0
    } else {
        1.0
    };
    let to = if t < 0.0 { BLUE } else { RED };
    let a = t.abs();
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * a).round() as u8;
    (RGBColor(mix(to.0), mix(to.1), mix(to.2)), a)
}

/// Draws a [`HeatTable`]: row labels on the left, column names upright above the grid, the
/// value in every cell, and a legend under it.
pub fn heat_table(spec: &HeatTable) -> Result<String, ChartError> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let err = chart_err(&spec.title);
    let margin = 16i32;
    let label_px = f64::from(LABEL_SIZE);
    let cols = spec.columns.len().max(1) as i32;
    let label_w = spec
        .rows
        .iter()
        .map(|r| text_width(&r.label, label_px))
        .fold(0.0f64, f64::max)
        .ceil() as i32
        + 12;
    let label_w = label_w.min(WIDTH as i32 * 2 / 5);
    let cell_w = (WIDTH as i32 - 2 * margin - label_w) / cols;
    let header_h = spec
        .columns
        .iter()
        .map(|c| text_width(c, label_px))
        .fold(0.0f64, f64::max)
        .ceil() as i32
        + 10;
    let row_h = 30i32;
    let top = 84;
    let grid_top = top + header_h;
    let grid_bottom = grid_top + row_h * spec.rows.len() as i32;
    let height = (grid_bottom + 64) as u32;
    let grid_left = margin + label_w;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let width = f64::from(WIDTH) - 2.0 * f64::from(margin);
        let centre = WIDTH as i32 / 2;
        let at = |h, v| Pos::new(h, v);
        root.draw(&Text::new(
            spec.title.as_str(),
            (centre, 10),
            (FONT, fitted(&spec.title, TITLE_SIZE, width))
                .into_font()
                .color(&BLACK)
                .pos(at(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| err(&e))?;
        root.draw(&Text::new(
            spec.note.as_str(),
            (centre, 46),
            (FONT, fitted(&spec.note, LABEL_SIZE, width))
                .into_font()
                .color(&BLACK)
                .pos(at(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| err(&e))?;
        for (j, name) in spec.columns.iter().enumerate() {
            let x = grid_left + cell_w * j as i32 + cell_w / 2;
            root.draw(&Text::new(
                name.as_str(),
                (x, grid_top - 6),
                (FONT, LABEL_SIZE)
                    .into_font()
                    .transform(FontTransform::Rotate270)
                    .color(&BLACK)
                    .pos(at(HPos::Left, VPos::Center)),
            ))
            .map_err(|e| err(&e))?;
        }
        for (i, row) in spec.rows.iter().enumerate() {
            let y = grid_top + row_h * i as i32;
            root.draw(&Text::new(
                row.label.as_str(),
                (grid_left - 10, y + row_h / 2),
                (
                    FONT,
                    fitted(&row.label, LABEL_SIZE, f64::from(label_w - 12)),
                )
                    .into_font()
                    .color(&BLACK)
                    .pos(at(HPos::Right, VPos::Center)),
            ))
            .map_err(|e| err(&e))?;
            for (j, v) in row.values.iter().enumerate() {
                let x = grid_left + cell_w * j as i32;
                let Some(v) = v.filter(|v| v.is_finite()) else {
                    continue;
                };
                let (fill, strength) = heat(v, spec.pivot);
                root.draw(&Rectangle::new(
                    [(x + 1, y + 1), (x + cell_w - 1, y + row_h - 1)],
                    fill.filled(),
                ))
                .map_err(|e| err(&e))?;
                let ink = if strength > 0.6 { WHITE } else { BLACK };
                root.draw(&Text::new(
                    thousands(v, 0),
                    (x + cell_w / 2, y + row_h / 2),
                    (FONT, LABEL_SIZE)
                        .into_font()
                        .color(&ink)
                        .pos(at(HPos::Center, VPos::Center)),
                ))
                .map_err(|e| err(&e))?;
            }
        }
        // Grid lines between rows, so a long row is easy to follow across.
        for i in 0..=spec.rows.len() as i32 {
            let y = grid_top + row_h * i;
            root.draw(&PathElement::new(
                vec![(margin, y), (grid_left + cell_w * cols, y)],
                RGBColor(200, 200, 200),
            ))
            .map_err(|e| err(&e))?;
        }
        // The legend: a swatch for below, at and above the pivot, left to right.
        let mut x = margin;
        let y = grid_bottom + 22;
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
                (FONT, LABEL_SIZE)
                    .into_font()
                    .color(&BLACK)
                    .pos(at(HPos::Left, VPos::Center)),
            ))
            .map_err(|e| err(&e))?;
            x += 26 + text_width(name, label_px).ceil() as i32 + 24;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// Series longer than this are drawn without point markers.
const MAX_MARKED_POINTS: usize = 24;
/// Narrowest legend column of `stacked_bars`.
const LEGEND_WIDTH: u32 = 200;
/// Above this many bars a panel drops per-bar totals and labels only some bars (fewer, when
/// their text would not fit side by side).
const MAX_LABELLED_BARS: usize = 24;

fn draw_side_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    parts: &[String],
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let top = 60;
    for (i, name) in parts.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        // Listed top to bottom in reverse, matching the stack as drawn (first part at the bottom).
        let y = top + 34 * (parts.len() - 1 - i) as i32;
        area.draw(&Rectangle::new([(10, y), (28, y + 18)], color.filled()))?;
        area.draw(&Text::new(
            name.as_str(),
            (36, y + 1),
            (FONT, LABEL_SIZE).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
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
        assert_eq!(heat(50.0, 100.0).0, BLUE);
        assert_eq!(heat(200.0, 100.0).0, RED);
        assert_eq!(heat(100.0, 100.0).0, RGBColor(255, 255, 255));
        assert_eq!(heat(0.0, 100.0).0, BLUE);
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
