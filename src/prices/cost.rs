//! Prices and what one request costs: dates for conditional prices, flat and tiered prices,
//! token usage and its conversion from the inclusive convention of genai-prices and OpenAI.

use std::fmt;

use super::clause::is_calendar_date;

/// A calendar date (UTC), what conditional prices start on and are looked up at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: u16,
    month: u8,
    day: u8,
}

impl Date {
    /// Reads `YYYY-MM-DD`, a real calendar date of years 1 to 9999.
    pub fn parse(text: &str) -> Option<Date> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let part = &text[r];
            part.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| part.parse().ok())
                .flatten()
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        is_calendar_date(year, month, day).then_some(Date {
            year: year as u16,
            month: month as u8,
            day: day as u8,
        })
    }

    /// The UTC date of an RFC 3339 timestamp (`2026-03-12T23:30:00-02:00` is 2026-03-13), as
    /// genai-prices reads a request's timestamp: one without an offset is UTC. A bare date is
    /// that date.
    pub fn of_timestamp(text: &str) -> Option<Date> {
        let date = Date::parse(text.get(..10)?)?;
        let rest = text.get(10..)?.as_bytes();
        if rest.is_empty() {
            return Some(date);
        }
        let two = |b: &[u8]| -> Option<i32> {
            match b {
                [a, c] if a.is_ascii_digit() && c.is_ascii_digit() => {
                    Some(i32::from(a - b'0') * 10 + i32::from(c - b'0'))
                }
                _ => None,
            }
        };
        // `T12:34`, then seconds and fractions, then the offset.
        if !matches!(rest.first(), Some(b'T' | b't' | b' ')) || rest.get(3) != Some(&b':') {
            return None;
        }
        let (hour, minute) = (two(rest.get(1..3)?)?, two(rest.get(4..6)?)?);
        if hour > 23 || minute > 59 {
            return None;
        }
        let tail = rest.get(6..)?;
        let skip = tail
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b':' || **c == b'.')
            .count();
        let offset = match &tail[skip..] {
            b"" | b"Z" | b"z" => 0,
            [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2]
            | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
                let (h, m) = (two(&[*h1, *h2])?, two(&[*m1, *m2])?);
                if h > 23 || m > 59 {
                    return None;
                }
                if *sign == b'-' {
                    -(h * 60 + m)
                } else {
                    h * 60 + m
                }
            }
            _ => return None,
        };
        let utc = hour * 60 + minute - offset;
        if utc < 0 {
            date.previous()
        } else if utc >= 24 * 60 {
            date.next()
        } else {
            Some(date)
        }
    }

    fn previous(self) -> Option<Date> {
        let (y, m, d) = (
            u32::from(self.year),
            u32::from(self.month),
            u32::from(self.day),
        );
        let (y, m, d) = match (m, d) {
            (1, 1) => (y.checked_sub(1)?, 12, 31),
            (_, 1) => (y, m - 1, super::clause::days_in_month(y, m - 1)),
            _ => (y, m, d - 1),
        };
        Date::parse(&format!("{y:04}-{m:02}-{d:02}"))
    }

    fn next(self) -> Option<Date> {
        let (y, m, d) = (
            u32::from(self.year),
            u32::from(self.month),
            u32::from(self.day),
        );
        let (y, m, d) = if d < super::clause::days_in_month(y, m) {
            (y, m, d + 1)
        } else if m < 12 {
            (y, m + 1, 1)
        } else {
            (y + 1, 1, 1)
        };
        Date::parse(&format!("{y:04}-{m:02}-{d:02}"))
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// One price in USD per million tokens (per thousand requests for `requests`).
#[derive(Debug, Clone, PartialEq)]
pub enum Price {
    Flat(f64),
    /// A cliff, not marginal pricing: when a request's total input tokens (cached ones
    /// included) are **more than** a tier's `start`, the highest such tier's price applies to
    /// every token of this kind in the request.
    Tiered {
        base: f64,
        tiers: Vec<Tier>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tier {
    pub start: u64,
    pub price: f64,
}

impl Price {
    /// The price for a request whose total input is `total_input` tokens.
    pub fn at(&self, total_input: u64) -> f64 {
        match self {
            Price::Flat(p) => *p,
            // Tiers are sorted by start at load; the package walks them from the top.
            Price::Tiered { base, tiers } => tiers
                .iter()
                .rev()
                .find(|t| total_input > t.start)
                .map_or(*base, |t| t.price),
        }
    }

    /// The price below every tier.
    pub fn base(&self) -> f64 {
        match self {
            Price::Flat(p) | Price::Tiered { base: p, .. } => *p,
        }
    }
}

/// `3`, or `3 (>200000: 6)` for a tiered price.
impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Price::Flat(p) => write!(f, "{p}"),
            Price::Tiered { base, tiers } => {
                write!(f, "{base}")?;
                if !tiers.is_empty() {
                    let t: Vec<String> = tiers
                        .iter()
                        .map(|t| format!(">{}: {}", t.start, t.price))
                        .collect();
                    write!(f, " ({})", t.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

/// A model's standard prices on one date, USD per million tokens; `None` where the table has no
/// such price. genai-prices charges tokens of an unpriced kind at the price of the kind they
/// are part of: cache reads and writes at the input price (OpenAI and Gemini list no cache
/// writes; old models no cache reads), 1-hour writes at the 5-minute write price. Tokens whose
/// kind has no price up the chain (embeddings have no output price) cost nothing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelPrices {
    pub input: Option<Price>,
    pub output: Option<Price>,
    /// 5-minute cache writes (genai-prices' `cache_write_mtok`).
    pub cache_write: Option<Price>,
    /// 1-hour cache writes (`cache_write_1h_mtok`).
    pub cache_write_1h: Option<Price>,
    pub cache_read: Option<Price>,
    /// Per thousand requests (`requests_kcount`), charged once per request.
    pub requests: Option<Price>,
}

/// What one request costs, in USD. `total` also holds per-request fees, which are neither input
/// nor output.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost {
    pub input: f64,
    pub output: f64,
    pub total: f64,
}

impl ModelPrices {
    /// What ONE request costs in USD. Tiers are chosen by this request's total input, so a
    /// session must be priced request by request, never on summed usage.
    pub fn cost(&self, usage: &Usage) -> f64 {
        self.cost_split(usage).total
    }

    /// [`ModelPrices::cost`], split into input and output as genai-prices reports it.
    pub fn cost_split(&self, usage: &Usage) -> Cost {
        let total_input = usage.total_input();
        let at = |p: &Option<Price>| p.as_ref().map(|p| p.at(total_input));
        let input = at(&self.input);
        let cache_read = at(&self.cache_read).or(input);
        let cache_write = at(&self.cache_write).or(input);
        let cache_write_1h = at(&self.cache_write_1h).or(cache_write);
        let usd =
            |tokens: u64, per_mtok: Option<f64>| per_mtok.map_or(0.0, |p| tokens as f64 * p / 1e6);
        let input_usd = usd(usage.input, input)
            + usd(usage.cache_read, cache_read)
            + usd(usage.cache_write, cache_write)
            + usd(usage.cache_write_1h, cache_write_1h);
        let output_usd = usd(usage.output, at(&self.output));
        let request_usd = at(&self.requests).map_or(0.0, |p| p / 1000.0);
        Cost {
            input: input_usd,
            output: output_usd,
            total: input_usd + output_usd + request_usd,
        }
    }

    /// The distinct tier thresholds of these prices, ascending: empty when every price is flat.
    pub fn tier_starts(&self) -> Vec<u64> {
        let mut starts: Vec<u64> = [
            &self.input,
            &self.output,
            &self.cache_write,
            &self.cache_write_1h,
            &self.cache_read,
            &self.requests,
        ]
        .into_iter()
        .flatten()
        .flat_map(|p| match p {
            Price::Flat(_) => Vec::new(),
            Price::Tiered { tiers, .. } => tiers.iter().map(|t| t.start).collect(),
        })
        .collect();
        starts.sort_unstable();
        starts.dedup();
        starts
    }
}

/// The tokens of ONE API request, in **disjoint** buckets: Anthropic's convention, where
/// `input_tokens` excludes the cache. Their sum is the request's total input, which picks price
/// tiers.
///
/// - Anthropic / Claude Code `usage`: `input` = `input_tokens`, `cache_read` =
///   `cache_read_input_tokens`, `cache_write_1h` = `cache_creation.ephemeral_1h_input_tokens`
///   and `cache_write` = `cache_creation_input_tokens` minus those 1-hour writes.
/// - OpenAI / Codex and genai-prices count cached tokens inside the input: use
///   [`Usage::from_inclusive`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Input tokens neither read from nor written to the cache.
    pub input: u64,
    /// Tokens written to the 5-minute cache.
    pub cache_write: u64,
    /// Tokens written to the 1-hour cache.
    pub cache_write_1h: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
    pub output: u64,
}

impl Usage {
    /// From genai-prices' (and OpenAI's) inclusive counts: `input` is ALL input tokens, cache
    /// reads and writes included, and `cache_write_1h` is part of `cache_write`. `None` when a
    /// part is larger than its whole (genai-prices refuses such usage too, for the kinds the
    /// model prices).
    pub fn from_inclusive(
        input: u64,
        cache_read: u64,
        cache_write: u64,
        cache_write_1h: u64,
        output: u64,
    ) -> Option<Usage> {
        Some(Usage {
            input: input.checked_sub(cache_read)?.checked_sub(cache_write)?,
            cache_write: cache_write.checked_sub(cache_write_1h)?,
            cache_write_1h,
            cache_read,
            output,
        })
    }

    /// All input tokens of the request, cached ones included (genai-prices' `input_tokens`):
    /// what tiers are chosen by.
    pub fn total_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_write)
            .saturating_add(self.cache_write_1h)
            .saturating_add(self.cache_read)
    }
}
