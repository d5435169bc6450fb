//! A BERT encoder forward pass for the CPU, written for MiniLM-sized models (all-MiniLM-L6-v2:
//! 6 layers, hidden 384, 12 heads, feed-forward 1536), computing what Hugging Face's
//! `BertModel` computes in f32: token + position + type embeddings, LayerNorm, then per layer
//! self-attention, a residual LayerNorm, the erf GELU feed-forward and another residual
//! LayerNorm. Equality with candle's `BertModel` is tested to 1e-5 (`embed` tests).
//!
//! Why not candle's model: a query is a handful of tokens, where a general tensor library
//! spends its time on per-operation allocation, layout copies and packing each weight matrix
//! for its matrix product; and a batch of documents padded to its longest member spends it on
//! padding. Here:
//! - sequences are packed without padding: the linear layers run over all real tokens of a
//!   batch at once, attention runs per sequence over its own tokens (no mask needed);
//! - Q, K and V are one fused linear layer; attention (scores, softmax, weighted sum) is one
//!   loop per head without intermediate tensors;
//! - few rows (a query) use a dot-product kernel that streams each weight row once, split
//!   across cores; many rows (a batch of documents) use the `gemm` crate's packed kernels
//!   (AVX-512 when the CPU has it, feature `x86-v4`).
//!
//! A crate of its own (used as `toolbudget::search::bert`) so that dev and test builds
//! optimise these kernels fully: at opt-level 1 they took three quarters of a debug `report`.

// The kernels are written once as `#[inline(always)]` functions and instantiated inside
// `#[target_feature]` wrappers (`dispatched!`): without forced inlining they would be compiled
// once for the baseline CPU and the wrappers would gain nothing.
#![allow(clippy::inline_always)]
// As in toolbudget's library: no unwrap where data arrives.
#![deny(clippy::unwrap_used)]

use rayon::prelude::*;

/// Defines `fn $name` that runs `$imp::<FMA>` compiled for the best vector extension the CPU
/// has (AVX-512, else AVX2 + FMA, else the baseline), checked at run time: the inner loops are
/// plain Rust that the compiler vectorises for each.
macro_rules! dispatched {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($a:ident: $t:ty),*) $(-> $r:ty)? => $imp:ident) => {
        $(#[$m])*
        $vis fn $name($($a: $t),*) $(-> $r)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,fma")]
                fn v4($($a: $t),*) $(-> $r)? {
                    $imp::<true>($($a),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn v3($($a: $t),*) $(-> $r)? {
                    $imp::<true>($($a),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F (and with it VL and FMA on every CPU
                    // that ships it).
                    return unsafe { v4($($a),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: the CPU has AVX2 and FMA.
                    return unsafe { v3($($a),*) };
                }
            }
            $imp::<false>($($a),*)
        }
    };
}

/// Rows at or below which a linear layer uses the streaming dot-product kernel.
const SMALL_ROWS: usize = 16;

/// The shape of the model, from its `config.json`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dims {
    pub hidden: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub layers: usize,
    pub max_positions: usize,
    pub layer_norm_eps: f32,
}

/// A weight matrix `out × inp`, row-major as stored (each output's weights contiguous), with
/// its bias.
pub struct Linear {
    pub w: Vec<f32>,
    pub b: Vec<f32>,
    pub out: usize,
    pub inp: usize,
}

pub struct LayerNorm {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

pub struct Layer {
    /// Query, key and value stacked: `3·hidden × hidden`.
    pub qkv: Linear,
    pub attention_out: Linear,
    pub attention_norm: LayerNorm,
    pub intermediate: Linear,
    pub output: Linear,
    pub output_norm: LayerNorm,
}

pub struct Encoder {
    pub dims: Dims,
    /// `vocab × hidden`.
    pub word: Vec<f32>,
    /// `max_positions × hidden`.
    pub position: Vec<f32>,
    /// Token type 0 (every token here).
    pub token_type: Vec<f32>,
    pub embedding_norm: LayerNorm,
    pub layers: Vec<Layer>,
}

/// How a forward pass uses the cores: `Split` spreads each matrix product over rayon's pool (one
/// query), `Single` keeps to the calling thread (when batches already run in parallel).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threads {
    Split,
    Single,
}

impl Encoder {
    /// Mean-pooled, L2-normalised vectors of `sequences` (token ids, each at most
    /// `max_positions` long and non-empty), one `hidden`-long row per sequence.
    pub fn embed(&self, sequences: &[&[u32]], threads: Threads) -> Vec<Vec<f32>> {
        let h = self.dims.hidden;
        let mut starts = Vec::with_capacity(sequences.len() + 1);
        let mut total = 0;
        for s in sequences {
            starts.push(total);
            total += s.len();
        }
        starts.push(total);
        let mut x = self.embeddings(sequences, total);
        for layer in &self.layers {
            x = self.layer(layer, x, &starts, threads);
        }
        (0..sequences.len())
            .map(|s| {
                let rows = &x[starts[s] * h..starts[s + 1] * h];
                let mut v = vec![0f32; h];
                for row in rows.chunks_exact(h) {
                    for (a, b) in v.iter_mut().zip(row) {
                        *a += b;
                    }
                }
                let n = (starts[s + 1] - starts[s]).max(1) as f32;
                for a in &mut v {
                    *a /= n;
                }
                let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-12);
                for a in &mut v {
                    *a /= norm;
                }
                v
            })
            .collect()
    }

    fn embeddings(&self, sequences: &[&[u32]], total: usize) -> Vec<f32> {
        let h = self.dims.hidden;
        let mut x = vec![0f32; total * h];
        let mut rows = x.chunks_exact_mut(h);
        for s in sequences {
            for (pos, &id) in s.iter().enumerate() {
                let row = rows.next().expect("one row per token");
                let word = &self.word[id as usize * h..][..h];
                let position = &self.position[pos * h..][..h];
                for i in 0..h {
                    row[i] = word[i] + position[i] + self.token_type[i];
                }
                layer_norm(row, &self.embedding_norm, self.dims.layer_norm_eps);
            }
        }
        x
    }

    fn layer(&self, layer: &Layer, x: Vec<f32>, starts: &[usize], threads: Threads) -> Vec<f32> {
        let h = self.dims.hidden;
        let rows = x.len() / h;
        let qkv = linear(&layer.qkv, &x, rows, threads);
        let mut context = vec![0f32; rows * h];
        for s in 0..starts.len() - 1 {
            let (a, b) = (starts[s], starts[s + 1]);
            attention(
                &qkv[a * 3 * h..b * 3 * h],
                &mut context[a * h..b * h],
                h,
                self.dims.heads,
            );
        }
        let mut attended = linear(&layer.attention_out, &context, rows, threads);
        add_and_norm(&mut attended, &x, &layer.attention_norm, h, self.dims);
        let mut inner = linear(&layer.intermediate, &attended, rows, threads);
        gelu_all(&mut inner);
        let mut out = linear(&layer.output, &inner, rows, threads);
        add_and_norm(&mut out, &attended, &layer.output_norm, h, self.dims);
        out
    }
}

dispatched! {
    /// Self-attention of one sequence: `qkv` is `len × 3·hidden` (Q | K | V per token),
    /// `context` receives `len × hidden`.
    fn attention(qkv: &[f32], context: &mut [f32], hidden: usize, heads: usize) => attention_impl
}

/// Per head: K is transposed first, so each score row is built by `d` vector multiply-adds
/// over all keys (no horizontal sums), then softmax, then the weighted sum of V rows.
#[inline(always)]
fn attention_impl<const FMA: bool>(qkv: &[f32], context: &mut [f32], hidden: usize, heads: usize) {
    let h = hidden;
    let d = h / heads;
    let len = qkv.len() / (3 * h);
    let scale = 1.0 / (d as f32).sqrt();
    let mut keys = vec![0f32; d * len];
    let mut scores = vec![0f32; len];
    for head in 0..heads {
        for j in 0..len {
            let k = &qkv[j * 3 * h + h + head * d..][..d];
            for (t, &v) in k.iter().enumerate() {
                keys[t * len + j] = v;
            }
        }
        for i in 0..len {
            let q = &qkv[i * 3 * h + head * d..][..d];
            // Scores in blocks of 64 keys held in registers across the `d` multiply-adds.
            let mut blocks = scores.chunks_exact_mut(64);
            for (b, block) in (&mut blocks).enumerate() {
                let mut acc = [0f32; 64];
                for (t, &qt) in q.iter().enumerate() {
                    let row = &keys[t * len + b * 64..][..64];
                    for k in 0..64 {
                        acc[k] = madd::<FMA>(qt * scale, row[k], acc[k]);
                    }
                }
                block.copy_from_slice(&acc);
            }
            let rest = blocks.into_remainder();
            let done = len - rest.len();
            rest.fill(0.0);
            for (t, &qt) in q.iter().enumerate() {
                for (s, &k) in rest.iter_mut().zip(&keys[t * len + done..][..len - done]) {
                    *s = madd::<FMA>(qt * scale, k, *s);
                }
            }
            let max = max_lanes::<16>(&scores);
            for s in &mut scores {
                *s = exp_approx(*s - max);
            }
            let inv = 1.0 / sum_lanes::<16>(&scores);
            // The weighted sum of V rows, 32 outputs at a time in registers.
            for c in (0..d).step_by(32) {
                let n = 32.min(d - c);
                let mut acc = [0f32; 32];
                for (j, s) in scores.iter().enumerate() {
                    let p = s * inv;
                    let v = &qkv[j * 3 * h + 2 * h + head * d + c..][..n];
                    if n == 32 {
                        for k in 0..32 {
                            acc[k] = madd::<FMA>(p, v[k], acc[k]);
                        }
                    } else {
                        for k in 0..n {
                            acc[k] = madd::<FMA>(p, v[k], acc[k]);
                        }
                    }
                }
                context[i * h + head * d + c..][..n].copy_from_slice(&acc[..n]);
            }
        }
    }
}

#[inline(always)]
fn max_lanes<const LANES: usize>(xs: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    for c in chunks {
        for k in 0..LANES {
            acc[k] = acc[k].max(c[k]);
        }
    }
    acc.iter().fold(tail, |a, &b| a.max(b))
}

/// `e^x` in f32 (Cephes' `expf`: range reduction by powers of two, a degree-6 polynomial;
/// within 2 ulp), written without branches so that loops over it vectorise.
#[inline(always)]
fn exp_approx(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    let n = (x * std::f32::consts::LOG2_E + 0.5).floor();
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut y = 1.987_569_1e-4f32;
    for c in [
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        1.666_666_5e-1,
        5e-1,
    ] {
        y = y * r + c;
    }
    let y = y * r * r + r + 1.0;
    y * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

/// `erf(x)` in f32: Eigen's rational approximation on [-4, 4] (erf is ±1 in f32 beyond),
/// within a few ulp, branch-free.
#[inline(always)]
fn erf_approx(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10f32;
    for c in [
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ] {
        p = p * x2 + c;
    }
    let mut q = -1.456_607_2e-5f32;
    for c in [-2.133_740_6e-4, -1.682_827e-3, -7.373_329e-3, -1.426_474e-2] {
        q = q * x2 + c;
    }
    x * p / q
}

dispatched! {
    /// The exact (erf) GELU, as BERT's `"gelu"`, in place.
    fn gelu_all(xs: &mut [f32]) => gelu_impl
}

#[inline(always)]
fn gelu_impl<const FMA: bool>(xs: &mut [f32]) {
    for v in xs.iter_mut() {
        *v = 0.5 * *v * (1.0 + erf_approx(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

#[inline(always)]
fn sum_lanes<const LANES: usize>(xs: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for k in 0..LANES {
            acc[k] += c[k];
        }
    }
    reduce(acc) + tail
}

/// Pairwise, so the rounding of a sum does not depend on the vector width.
#[inline(always)]
fn reduce<const LANES: usize>(mut acc: [f32; LANES]) -> f32 {
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            acc[k] += acc[k + width];
        }
    }
    acc[0]
}

/// `x = LayerNorm(x + residual)`, row by row.
fn add_and_norm(x: &mut [f32], residual: &[f32], norm: &LayerNorm, h: usize, dims: Dims) {
    for (row, res) in x.chunks_exact_mut(h).zip(residual.chunks_exact(h)) {
        for (a, b) in row.iter_mut().zip(res) {
            *a += b;
        }
        layer_norm(row, norm, dims.layer_norm_eps);
    }
}

fn layer_norm(row: &mut [f32], norm: &LayerNorm, eps: f32) {
    let n = row.len() as f32;
    let mean = row.iter().sum::<f32>() / n;
    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, g), b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
        *v = (*v - mean) * inv * g + b;
    }
}

/// `x · Wᵀ + b` for `rows` rows of `x` (`rows × inp`): `rows × out`.
pub fn linear(l: &Linear, x: &[f32], rows: usize, threads: Threads) -> Vec<f32> {
    debug_assert_eq!(x.len(), rows * l.inp);
    let mut y = vec![0f32; rows * l.out];
    if rows == 0 {
        return y;
    }
    if rows <= SMALL_ROWS {
        linear_few_rows(l, x, rows, &mut y, threads);
    } else {
        let parallelism = match threads {
            Threads::Split => gemm::Parallelism::Rayon(rayon::current_num_threads()),
            Threads::Single => gemm::Parallelism::None,
        };
        // SAFETY: the pointers and strides describe `y` (rows × out, row-major), `x`
        // (rows × inp, row-major) and Wᵀ (inp × out: element (k, n) at w[n·inp + k]); all
        // three buffers have exactly those sizes and outlive the call.
        unsafe {
            gemm::gemm(
                rows,
                l.out,
                l.inp,
                y.as_mut_ptr(),
                1,
                l.out as isize,
                false,
                x.as_ptr(),
                1,
                l.inp as isize,
                l.w.as_ptr(),
                l.inp as isize,
                1,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        }
    }
    for row in y.chunks_exact_mut(l.out) {
        for (v, b) in row.iter_mut().zip(&l.b) {
            *v += b;
        }
    }
    y
}

/// Outputs per parallel task of the few-rows kernel: large enough that scheduling is noise.
const OUTPUTS_PER_TASK: usize = 64;

/// Each weight row is read once and dotted with every input row (which stay in L1). The work
/// is split over output columns, written back per task.
fn linear_few_rows(l: &Linear, x: &[f32], rows: usize, y: &mut [f32], threads: Threads) {
    let task = |first: usize, out: &mut [f32]| {
        // out: rows × n for outputs first..first+n, row-major.
        let n = out.len() / rows;
        for c in 0..n {
            let w = &l.w[(first + c) * l.inp..][..l.inp];
            for r in 0..rows {
                out[r * n + c] = dot(&x[r * l.inp..][..l.inp], w);
            }
        }
    };
    let chunks: Vec<usize> = (0..l.out).step_by(OUTPUTS_PER_TASK).collect();
    let parts: Vec<Vec<f32>> = match threads {
        Threads::Split => chunks
            .par_iter()
            .map(|&first| {
                let n = OUTPUTS_PER_TASK.min(l.out - first);
                let mut out = vec![0f32; rows * n];
                task(first, &mut out);
                out
            })
            .collect(),
        Threads::Single => chunks
            .iter()
            .map(|&first| {
                let n = OUTPUTS_PER_TASK.min(l.out - first);
                let mut out = vec![0f32; rows * n];
                task(first, &mut out);
                out
            })
            .collect(),
    };
    for (&first, part) in chunks.iter().zip(&parts) {
        let n = part.len() / rows;
        for r in 0..rows {
            y[r * l.out + first..][..n].copy_from_slice(&part[r * n..][..n]);
        }
    }
}

dispatched! {
    /// A dot product in 64 independent lanes (4 × 16: enough independent chains to keep the
    /// FMA units busy).
    pub fn dot(a: &[f32], b: &[f32]) -> f32 => dot64
}

#[inline(always)]
fn dot64<const FMA: bool>(a: &[f32], b: &[f32]) -> f32 {
    dot_lanes::<FMA, 64>(a, b)
}

#[inline(always)]
fn dot_lanes<const FMA: bool, const LANES: usize>(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    for (x, y) in ca.zip(cb) {
        for k in 0..LANES {
            acc[k] = madd::<FMA>(x[k], y[k], acc[k]);
        }
    }
    reduce(acc) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_erf_approximations_hold_their_error_bounds() {
        let mut worst_exp = 0f64;
        let mut worst_erf = 0f64;
        for i in -80_000..=10_000 {
            let x = i as f32 * 1e-3;
            let want = f64::from(x).exp();
            worst_exp = worst_exp.max((f64::from(exp_approx(x)) - want).abs() / want);
        }
        for i in -6_000..=6_000 {
            let x = i as f32 * 1e-3;
            let want = libm::erf(f64::from(x));
            worst_erf = worst_erf.max((f64::from(erf_approx(x)) - want).abs());
        }
        assert!(worst_exp < 5e-7, "exp relative error {worst_exp}");
        assert!(worst_erf < 1e-6, "erf absolute error {worst_erf}");
        assert_eq!(exp_approx(-1000.0), (-87f32).exp());
    }

    /// The vectorised kernels against plain sums.
    #[test]
    fn dot_and_gelu_match_plain_arithmetic() {
        let a: Vec<f32> = (0..1_000)
            .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
            .collect();
        let b: Vec<f32> = (0..1_000)
            .map(|i| ((i * 53) % 97) as f32 / 40.0 - 1.2)
            .collect();
        for n in [0, 1, 31, 64, 384, 1_000] {
            let want: f64 = a[..n]
                .iter()
                .zip(&b[..n])
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            assert!(
                (f64::from(dot(&a[..n], &b[..n])) - want).abs() < 1e-3,
                "n={n}"
            );
        }
        let mut xs = vec![-3.0f32, -1.0, 0.0, 0.5, 2.0];
        let want: Vec<f64> = xs
            .iter()
            .map(|&x| {
                let x = f64::from(x);
                0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
            })
            .collect();
        gelu_all(&mut xs);
        for (g, w) in xs.iter().zip(want) {
            assert!((f64::from(*g) - w).abs() < 1e-6, "{g} vs {w}");
        }
    }
}
