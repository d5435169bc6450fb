use toolbudget::report::charts::*;
fn main() {
    let sizes = [10.0, 100.0, 1000.0, 10000.0];
    let mut spec = LineChart::new(
        "First request vs catalog size",
        "catalog size (tools)",
        "first-request input tokens",
        vec![
            Series::new(
                "eager",
                sizes.iter().map(|&n| (n, 3000.0 + n * 280.0)).collect(),
            ),
            Series::new(
                "deferred, names",
                sizes.iter().map(|&n| (n, 3500.0 + n * 9.0)).collect(),
            ),
            Series::new(
                "deferred, names + descriptions",
                sizes.iter().map(|&n| (n, 3500.0 + n * 30.0)).collect(),
            ),
            Series::new(
                "deferred, servers",
                sizes.iter().map(|&n| (n, 3600.0 + n * 0.5)).collect(),
            )
            .dashed(),
        ],
    );
    spec.x_scale = Scale::Log;
    spec.y_scale = Scale::Log;
    std::fs::write("/tmp/c1.svg", line_chart(&spec).unwrap()).unwrap();
    let mut r = LineChart::new(
        "Recall@k per scorer",
        "k (results returned)",
        "recall@k (fraction of expected tools)",
        vec![
            Series::new(
                "keyword",
                vec![(1.0, 0.5), (3.0, 0.7), (5.0, 0.8), (10.0, 0.9)],
            ),
            Series::new(
                "bm25",
                vec![(1.0, 0.55), (3.0, 0.75), (5.0, 0.82), (10.0, 0.91)],
            ),
            Series::new(
                "regex",
                vec![(1.0, 0.2), (3.0, 0.3), (5.0, 0.4), (10.0, 0.5)],
            ),
        ],
    );
    r.y_range = Some((0.0, 1.0));
    r.x_integer = true;
    r.legend = LegendAt::LowerRight;
    std::fs::write("/tmp/c2.svg", line_chart(&r).unwrap()).unwrap();
    let parts: Vec<String> = [
        "system",
        "tool_overhead",
        "tools",
        "deferred_list",
        "history",
        "new",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let e: Vec<Bar> = (0..6)
        .map(|i| Bar {
            label: format!("{}", i + 1),
            values: vec![3000.0, 300.0, 45000.0, 0.0, 500.0 * i as f64, 100.0],
        })
        .collect();
    let d: Vec<Bar> = (0..8)
        .map(|i| Bar {
            label: format!("{}", i + 1),
            values: vec![3000.0, 300.0, 2000.0, 1500.0, 700.0 * i as f64, 100.0],
        })
        .collect();
    let s = StackedBars {
        title: "Tokens per request".into(),
        x_label: "request number".into(),
        y_label: "input tokens".into(),
        parts,
        panels: vec![
            BarPanel {
                title: "eager".into(),
                bars: e,
            },
            BarPanel {
                title: "deferred".into(),
                bars: d,
            },
        ],
    };
    std::fs::write("/tmp/c3.svg", stacked_bars(&s).unwrap()).unwrap();
}
