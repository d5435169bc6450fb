//! Line charts: one or more series over a linear or logarithmic x and y, a legend that tells every series apart.

use super::*;

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

/// The x range: lines start at the first x, not at 0 (a linear axis gets a little room).
fn x_range(spec: &LineChart) -> (f64, f64) {
    let xs = || {
        spec.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
    };
    let (lo, hi) = fit_range(xs(), spec.x_scale);
    match spec.x_scale {
        Scale::Linear => {
            let min = xs().fold(f64::INFINITY, f64::min);
            let max = xs().fold(f64::NEG_INFINITY, f64::max);
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
}

/// What the drawing of a line chart needs, whatever its coordinate types.
struct Frame<'a> {
    spec: &'a LineChart,
    x: (f64, f64),
    y: (f64, f64),
    axis_size: u32,
}

/// A series' colour: the reference grey, its own, or the palette's next.
fn series_color(series: &Series, next: &mut usize) -> RGBColor {
    if series.reference {
        RGBColor(90, 90, 90)
    } else if let Some(i) = series.color {
        PALETTE[i % PALETTE.len()]
    } else {
        *next += 1;
        PALETTE[(*next - 1) % PALETTE.len()]
    }
}

/// A series' points that its axes can show (finite, positive on a log axis).
fn drawable(series: &Series, spec: &LineChart) -> Vec<(f64, f64)> {
    let keep = |s: Scale, v: f64| s == Scale::Linear || v > 0.0;
    series
        .points
        .iter()
        .copied()
        .filter(|(x, y)| {
            x.is_finite() && y.is_finite() && keep(spec.x_scale, *x) && keep(spec.y_scale, *y)
        })
        .collect()
}

// Plotters fixes the coordinate type per scale, so each combination is its own branch of
// `draw_line_chart`; the drawing after it is shared through this macro.
macro_rules! draw_frame {
    ($chart:expr, $frame:expr, $err:expr) => {{
        let frame: &Frame<'_> = $frame;
        let (spec, err) = (frame.spec, $err);
        let ((x0, x1), (y0, y1), axis_size) = (frame.x, frame.y, frame.axis_size);
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
            let color = series_color(series, &mut next_color);
            let points = drawable(series, spec);
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

pub(super) fn draw_line_chart(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    spec: &LineChart,
) -> Result<(), ChartError> {
    let err = chart_err(&spec.title);
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let ys = spec
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = x_range(spec);
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
    let frame = Frame {
        spec,
        x: (x0, x1),
        y: (y0, y1),
        axis_size,
    };
    match (spec.x_scale, spec.y_scale) {
        (Scale::Linear, Scale::Linear) => {
            draw_frame!(builder.build_cartesian_2d(x0..x1, y0..y1), &frame, &err);
        }
        (Scale::Log, Scale::Linear) => {
            draw_frame!(
                builder.build_cartesian_2d((x0..x1).log_scale(), y0..y1),
                &frame,
                &err
            );
        }
        (Scale::Linear, Scale::Log) => {
            draw_frame!(
                builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale()),
                &frame,
                &err
            );
        }
        (Scale::Log, Scale::Log) => {
            draw_frame!(
                builder.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale()),
                &frame,
                &err
            );
        }
    }
    Ok(())
}

pub(super) const MAX_MARKED_POINTS: usize = 24;
