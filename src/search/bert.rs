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

use rayon::prelude::*;

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
                v.iter_mut().for_each(|a| *a /= n);
                let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt().max(1e-12);
                v.iter_mut().for_each(|a| *a /= norm);
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
            self.attention(&qkv[a * 3 * h..b * 3 * h], &mut context[a * h..b * h]);
        }
        let mut attended = linear(&layer.attention_out, &context, rows, threads);
        add_and_norm(&mut attended, &x, &layer.attention_norm, h, self.dims);
        let mut inner = linear(&layer.intermediate, &attended, rows, threads);
        inner.iter_mut().for_each(|v| *v = gelu(*v));
        let mut out = linear(&layer.output, &inner, rows, threads);
        add_and_norm(&mut out, &attended, &layer.output_norm, h, self.dims);
        out
    }

    /// Self-attention of one sequence: `qkv` is `len × 3·hidden` (Q | K | V per token),
    /// `context` receives `len × hidden`.
    fn attention(&self, qkv: &[f32], context: &mut [f32]) {
        let h = self.dims.hidden;
        let heads = self.dims.heads;
        let d = h / heads;
        let len = qkv.len() / (3 * h);
        let scale = 1.0 / (d as f32).sqrt();
        let mut scores = vec![0f32; len];
        for head in 0..heads {
            for i in 0..len {
                let q = &qkv[i * 3 * h + head * d..][..d];
                let mut max = f32::NEG_INFINITY;
                for (j, s) in scores.iter_mut().enumerate() {
                    let k = &qkv[j * 3 * h + h + head * d..][..d];
                    *s = dot_short(q, k) * scale;
                    max = max.max(*s);
                }
                let mut sum = 0f32;
                for s in scores.iter_mut() {
                    *s = (*s - max).exp();
                    sum += *s;
                }
                let out = &mut context[i * h + head * d..][..d];
                out.fill(0.0);
                for (j, s) in scores.iter().enumerate() {
                    let p = s / sum;
                    let v = &qkv[j * 3 * h + 2 * h + head * d..][..d];
                    for (o, v) in out.iter_mut().zip(v) {
                        *o += p * v;
                    }
                }
            }
        }
    }
}

fn dot_short(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
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

/// The exact (erf) GELU, as BERT's `"gelu"`.
fn gelu(x: f32) -> f32 {
    let x64 = f64::from(x);
    (0.5 * x64 * (1.0 + libm::erf(x64 * std::f64::consts::FRAC_1_SQRT_2))) as f32
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

/// A dot product in 64 independent lanes (4 × 16: enough independent chains to keep the FMA
/// units busy), dispatched on the CPU's vector width.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { dot_avx512(a, b) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_lanes::<false>(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn dot_avx512(a: &[f32], b: &[f32]) -> f32 {
    dot_lanes::<true>(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_lanes::<true>(a, b)
}

#[inline(always)]
fn dot_lanes<const FMA: bool>(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 64;
    let mut acc = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    for (x, y) in ca.zip(cb) {
        for k in 0..LANES {
            acc[k] = if FMA {
                x[k].mul_add(y[k], acc[k])
            } else {
                x[k] * y[k] + acc[k]
            };
        }
    }
    // Pairwise, so the sum's rounding does not depend on the vector width.
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            acc[k] += acc[k + width];
        }
    }
    acc[0] + tail
}
