//! Numbers as toolbudget writes them: values rounded before they are stored, and the text of
//! counts, percentages and dollars. One definition each, shared by the library's messages and
//! every view.

/// Rounds to `decimals` places. A zero result is `+0.0`, so a zero never prints with a sign
/// (an empty sum, or a negative value that rounds to nothing, is `-0.0` before this).
pub fn round(x: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    let r = (x * f).round() / f;
    if r == 0.0 { 0.0 } else { r }
}

/// `part` as a percentage of `whole`, to 2 decimals; 0 when `whole` is 0.
pub fn percent_of(part: f64, whole: f64) -> f64 {
    if whole == 0.0 {
        0.0
    } else {
        round(part / whole * 100.0, 2)
    }
}

/// `1234567.0` → `1,234,567`; fractions keep up to the given decimals (`0.125` → `0.13` at 2).
pub fn thousands(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let s = format!("{:.*}", decimals, x.abs());
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut grouped = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let frac = frac.trim_end_matches('0');
    let neg = x < 0.0 && (grouped.chars().any(|c| c != '0' && c != ',') || !frac.is_empty());
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&grouped);
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// A count with thousands grouped: `1234` → `1,234`.
pub fn int(x: usize) -> String {
    thousands(x as f64, 0)
}

/// One decimal always shown, thousands grouped: `2562.44` → `2,562.4`, `26.0` → `26.0`.
pub fn fixed1(x: f64) -> String {
    let tenths = (x * 10.0).round();
    let whole = (tenths / 10.0).trunc();
    let frac = (tenths - whole * 10.0).abs() as u64;
    format!("{}.{frac}", thousands(whole, 0))
}

/// A count and its noun: `1 scenario`, `2 scenarios`, `1,200 queries`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", int(n), if n == 1 { one } else { many })
}

/// A percentage given on the percent scale, with `decimals` decimals:
/// `percent(41.49, 1)` → `41.5%`, `percent(137.2, 0)` → `137%`.
pub fn percent(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}%")
}

/// The nearest-rank `p`th percentile of `sorted` (ascending): the value at rank ⌈p/100·n⌉,
/// the first for p = 0; the default (zero) of an empty list.
pub fn percentile<T: Copy + Default>(sorted: &[T], p: f64) -> T {
    if sorted.is_empty() {
        return T::default();
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Dollars: cents below $100, whole dollars with thousands grouped above.
pub fn usd(x: f64) -> String {
    if x >= 100.0 {
        format!("${}", thousands(x, 0))
    } else {
        format!("${x:.2}")
    }
}

/// Dollars to a hundredth of a cent: the cost of one conversation (`$0.2283`).
pub fn usd_exact(x: f64) -> String {
    format!("${x:.4}")
}

/// A metric with three decimals (`-0.0` prints as 0).
pub fn metric(x: f64) -> String {
    // `-0.0` (a sum of nothing, negated) prints as 0.
    let x = if x == 0.0 { 0.0 } else { x };
    format!("{x:.3}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0.0, 0), "0");
        assert_eq!(thousands(999.0, 0), "999");
        assert_eq!(thousands(1000.0, 0), "1,000");
        assert_eq!(thousands(1234567.0, 0), "1,234,567");
        assert_eq!(thousands(-12345.5, 1), "-12,345.5");
        assert_eq!(thousands(0.126, 2), "0.13");
        assert_eq!(thousands(2.0, 2), "2");
        assert_eq!(thousands(-0.0001, 2), "0");
    }

    #[test]
    fn round_gives_no_negative_zero() {
        assert_eq!(round(2.0 / 3.0, 4), 0.6667);
        assert_eq!(round(-1.005, 1), -1.0);
        assert!(round(-0.0, 2).is_sign_positive());
        assert!(round(-0.001, 2).is_sign_positive());
        assert_eq!(round(1234.5, 0), 1235.0);
    }

    #[test]
    fn percentages() {
        assert_eq!(percent_of(1.0, 3.0), 33.33);
        assert_eq!(percent_of(5.0, 0.0), 0.0);
        assert_eq!(percent(41.49, 1), "41.5%");
        assert_eq!(percent(137.2, 0), "137%");
        assert_eq!(percent(12.3456, 2), "12.35%");
    }

    #[test]
    fn fixed1_keeps_one_decimal() {
        assert_eq!(fixed1(2562.44), "2,562.4");
        assert_eq!(fixed1(26.0), "26.0");
        assert_eq!(fixed1(0.06), "0.1");
        assert_eq!(fixed1(1999.96), "2,000.0");
    }
}

#[cfg(test)]
mod plural_tests {
    use super::plural;

    #[test]
    fn one_is_singular() {
        assert_eq!(plural(1, "tool", "tools"), "1 tool");
        assert_eq!(plural(0, "tool", "tools"), "0 tools");
        assert_eq!(plural(1200, "query", "queries"), "1,200 queries");
    }
}
