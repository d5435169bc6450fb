//! Stacked bars: panels one above the other, sharing the y scale, their legend beside them.

use super::*;

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
        let layout = Layout::of(spec);
        let (plot, side) = root.split_horizontally(WIDTH - layout.legend_width);
        draw_side_legend(&side, &spec.parts).map_err(|e| err(&e))?;
        let areas = plot.split_evenly((panels, 1));
        for (pi, (area, panel)) in areas.iter().zip(&spec.panels).enumerate() {
            let last = pi + 1 == spec.panels.len();
            draw_panel(area, spec, panel, &layout, last)?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// What every panel shares: the y scale, the bar count, the legend column, and whether every
/// bar is labelled and totalled.
struct Layout {
    y_max: f64,
    n_max: usize,
    legend_width: u32,
    exact: bool,
    totals: bool,
}

fn total(bar: &Bar) -> f64 {
    bar.values.iter().filter(|v| v.is_finite()).sum()
}

impl Layout {
    fn of(spec: &StackedBars) -> Layout {
        let bars = || spec.panels.iter().flat_map(|p| p.bars.iter());
        let y_max = bars().map(total).fold(0.0f64, f64::max);
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
            && fits(bars().map(|b| b.label.clone()).collect(), LABEL_SIZE);
        // Totals above the bars only when every total fits its bar's width.
        let totals = n_max <= MAX_LABELLED_BARS
            && fits(bars().map(|b| thousands(total(b), 0)).collect(), SMALL_SIZE);
        Layout {
            y_max,
            n_max,
            legend_width,
            exact,
            totals,
        }
    }
}

/// One panel: its title, axes, the stacked parts of each bar and (when they fit) the totals.
fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    spec: &StackedBars,
    panel: &BarPanel,
    layout: &Layout,
    last: bool,
) -> Result<(), ChartError> {
    let err = chart_err(&spec.title);
    let (y_max, n_max, exact) = (layout.y_max, layout.n_max, layout.exact);
    let area = titled(area, &panel.title, AXIS_TITLE_SIZE + 2).map_err(|e| err(&e))?;
    // The y title stands along one panel: it shrinks to fit the panel's plot height.
    let plot_h = f64::from(area.dim_in_pixel().1) - f64::from(if last { 60 } else { 36 }) - 30.0;
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
    // Tick positions at bar centres: plotters places x ticks evenly over the range, so ask for
    // one per bar (capped, to avoid crowding long conversations).
    mesh.x_labels(if exact { n_max * 2 + 1 } else { 12 });
    if last {
        mesh.x_desc(spec.x_label.as_str());
    }
    mesh.draw().map_err(|e| err(&e))?;
    for part in 0..spec.parts.len() {
        chart
            .draw_series(part_rects(panel, part))
            .map_err(|e| err(&e))?;
    }
    if layout.totals {
        chart
            .draw_series(total_labels(panel, y_max))
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

/// The rectangles of one part of every bar, stacked on the parts below it.
fn part_rects(panel: &BarPanel, part: usize) -> Vec<Rectangle<(f64, f64)>> {
    let color = PALETTE[part % PALETTE.len()];
    panel
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
        .collect()
}

/// Each bar's total, above it.
fn total_labels(panel: &BarPanel, y_max: f64) -> Vec<Text<'static, (f64, f64), String>> {
    panel
        .bars
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let total = total(b);
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
        .collect()
}

/// Narrowest legend column of `stacked_bars`.
pub(super) const LEGEND_WIDTH: u32 = 200;

/// Above this many bars a panel drops per-bar totals and labels only some bars (fewer, when
/// their text would not fit side by side).
pub(super) const MAX_LABELLED_BARS: usize = 24;

pub(super) fn draw_side_legend(
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
