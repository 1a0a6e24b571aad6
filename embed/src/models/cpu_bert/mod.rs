//! A BERT encoder written for embedding on the CPU.
//!
//! candle-transformers' `bert` runs a general tensor graph: every step allocates a tensor,
//! padded batches carry masked tokens through every layer, and each element-wise op
//! synchronises candle's thread pool. This encoder computes the same function (the same
//! weights, the same layer order and epsilons) the way an
//! embedder needs it (its weights read straight from the mapped safetensors file):
//! - sequences are packed row after row with no padding: the dense layers see exactly the real
//!   tokens, and attention runs per sequence (`attention.rs`), so no mask is needed;
//! - the dense layers call `gemm` directly on row-major buffers (`matmul.rs`), with the bias
//!   as the initial value of the output;
//! - GELU, softmax and the residual + layer norm are single vectorisable passes
//!   (`kernels.rs`), spread over the rayon pool by rows; at int8 the same passes quantize
//!   the next product's input (`int8::QuantRows`) while each block of rows is in cache.
//!
//! The golden tests hold it to the sentence-transformers vectors (cosine ≥ 0.9999), and
//! `native_and_candle_kernels_agree` holds it to candle's `BertModel` on the same inputs.

mod simd;

mod attention;
#[cfg(all(target_arch = "x86_64", feature = "avx512"))]
mod attention_avx512;
#[cfg(target_arch = "x86_64")]
mod gelu_avx2;
#[cfg(all(target_arch = "x86_64", feature = "avx512"))]
mod gelu_avx512;
mod int8;
mod int8_block;
#[cfg(target_arch = "aarch64")]
mod int8_neon;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod int8_wasm;
#[cfg(target_arch = "x86_64")]
mod int8_x86;
mod kernels;
mod matmul;
mod panels;

use candle_transformers::models::bert::{Config, HiddenAct, PositionEmbeddingType};
use rayon::prelude::*;

use attention::Packing;
use int8::{QuantLinear, QuantRows};
use kernels::Norm;
use matmul::Linear;

use super::Precision;

use crate::weights::{F16Rows, Floats, MappedTensors};

/// A dense layer at the encoder's precision.
#[derive(Debug, Clone)]
enum Dense {
    F32(Linear),
    Int8(QuantLinear),
}

/// A dense layer's `out × inp` weight as the file holds it: f32 values, or 8-bit integers
/// with one scale per output channel (an int8 model file, `quantize.rs`).
enum Weight {
    F32(Floats),
    Int8 { q: Vec<i8>, scale: Vec<f32> },
}

impl Weight {
    /// The weight's values in f32 (an int8 one multiplied out).
    fn to_f32(&self) -> Vec<f32> {
        match self {
            Weight::F32(w) => w.to_vec(),
            Weight::Int8 { q, scale } => {
                let inp = q.len() / scale.len().max(1);
                q.chunks_exact(inp.max(1))
                    .zip(scale)
                    .flat_map(|(row, &s)| row.iter().map(move |&q| f32::from(q) * s))
                    .collect()
            }
        }
    }

    /// Weights of the same input width stacked by output channels (query, key and value in
    /// one product): in 8-bit integers when every part is.
    fn stack(parts: &[Weight]) -> Weight {
        if parts.iter().all(|p| matches!(p, Weight::Int8 { .. })) {
            let (mut q, mut scale) = (Vec::new(), Vec::new());
            for p in parts {
                if let Weight::Int8 { q: pq, scale: ps } = p {
                    q.extend_from_slice(pq);
                    scale.extend_from_slice(ps);
                }
            }
            return Weight::Int8 { q, scale };
        }
        Weight::F32(Floats::Owned(
            parts.iter().flat_map(Weight::to_f32).collect(),
        ))
    }
}

impl Dense {
    /// From PyTorch's `out × inp` weight, at `precision`. A weight the file holds in 8-bit
    /// integers is taken as it is at int8 (the integers [`QuantLinear::new`] would have made of
    /// the f32 weight, [`crate::weights::quantize_row`]) and multiplied out at f32.
    fn new(weight: Weight, bias: Vec<f32>, inp: usize, out: usize, precision: Precision) -> Self {
        let kernel = int8::Kernel::best();
        match (precision, weight) {
            (Precision::F32, Weight::F32(w)) => Dense::F32(Linear::new(&w, bias, inp, out)),
            (Precision::F32, w) => Dense::F32(Linear::new(&w.to_f32(), bias, inp, out)),
            (Precision::Int8, Weight::F32(w)) => {
                Dense::Int8(QuantLinear::new(&w, bias, inp, out, kernel))
            }
            (Precision::Int8, Weight::Int8 { q, scale }) => {
                Dense::Int8(QuantLinear::from_rows(&q, &scale, bias, inp, out, kernel))
            }
        }
    }

    fn out(&self) -> usize {
        match self {
            Dense::F32(l) => l.out,
            Dense::Int8(l) => l.out,
        }
    }

    fn forward(&self, x: &[f32], rows: usize, out: &mut [f32], parallel: bool) {
        match self {
            Dense::F32(l) => l.forward(x, rows, out, parallel),
            Dense::Int8(l) => l.forward(x, rows, out, parallel),
        }
    }

    /// Room for this layer's input quantized, where it is an int8 layer: the pass that
    /// computes the input fills it (see [`by_rows`]).
    fn quantized_input(&self, rows: usize) -> Option<QuantRows> {
        match self {
            Dense::F32(_) => None,
            Dense::Int8(l) => Some(QuantRows::new(rows, l.inp)),
        }
    }

    /// As [`Dense::forward`], reading `q` (`x` quantized, where the layer is int8 and the
    /// pass that computed `x` filled it) instead of quantizing `x` again.
    fn forward_from(
        &self,
        x: &[f32],
        q: Option<&QuantRows>,
        rows: usize,
        out: &mut [f32],
        parallel: bool,
    ) {
        match (self, q) {
            (Dense::Int8(l), Some(q)) => l.forward_quantized(q, rows, out, parallel),
            _ => self.forward(x, rows, out, parallel),
        }
    }
}

/// One transformer layer.
#[derive(Debug, Clone)]
struct Layer {
    /// Query, key and value projections stacked: `3·hidden × hidden`.
    qkv: Dense,
    attn_out: Dense,
    attn_norm: Norm,
    up: Dense,
    down: Dense,
    out_norm: Norm,
}

/// A BERT-family encoder (absolute positions) for the CPU.
#[derive(Debug, Clone)]
pub(crate) struct CpuBert {
    /// The word-embedding table, read in place from the mapped weights (f32 when aligned, or
    /// 16-bit floats).
    word: Table,
    position: Vec<f32>,
    /// The token-type (segment) table, `types × hidden`: an embedder's inputs are all segment
    /// 0, a cross-encoder's second text segment 1.
    token_types: Vec<f32>,
    emb_norm: Norm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    vocab: usize,
    max_positions: usize,
    act: HiddenAct,
}

/// An embedding table as the file holds it (read in place from the mapping).
#[derive(Debug, Clone)]
enum Table {
    F32(Floats),
    /// 16-bit floats, as an int8 model file holds the word table (`quantize.rs`).
    F16(F16Rows),
}

/// The tensors under one name prefix (as candle's `VarBuilder::pp`).
struct Scope<'a> {
    tensors: &'a MappedTensors,
    prefix: String,
}

impl Scope<'_> {
    fn pp(&self, name: &str) -> Self {
        Scope {
            tensors: self.tensors,
            prefix: format!("{}{name}.", self.prefix),
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.tensors.contains(&format!("{}{name}", self.prefix))
    }

    fn get(&self, shape: &[usize], name: &str) -> candle_core::Result<Floats> {
        self.tensors
            .floats(&format!("{}{name}", self.prefix), shape)
            .map_err(candle_core::Error::msg)
    }

    /// A dense layer's `out × inp` weight, in 8-bit integers where the file holds it so.
    fn weight(&self, out: usize, inp: usize) -> candle_core::Result<Weight> {
        let name = format!("{}weight", self.prefix);
        if !self.tensors.is_int8(&name) {
            return Ok(Weight::F32(self.get(&[out, inp], "weight")?));
        }
        let rows = self
            .tensors
            .int8_rows(&name, out, inp)
            .map_err(candle_core::Error::msg)?;
        Ok(Weight::Int8 {
            q: rows.values().to_vec(),
            scale: rows.scales().to_vec(),
        })
    }

    /// An embedding table of `rows × width`, kept in 16-bit floats where the file holds it so.
    fn table(&self, rows: usize, width: usize) -> candle_core::Result<Table> {
        let name = format!("{}weight", self.prefix);
        let halves = self.tensors.f16_rows(&name, rows, width);
        Ok(match halves.map_err(candle_core::Error::msg)? {
            Some(t) => Table::F16(t),
            None => Table::F32(self.get(&[rows, width], "weight")?),
        })
    }

    /// A small tensor, copied out of the mapping.
    fn vec(&self, shape: &[usize], name: &str) -> candle_core::Result<Vec<f32>> {
        Ok(self.get(shape, name)?.to_vec())
    }
}

/// The `out × inp` weight and the bias of a dense layer.
fn dense(s: Scope, inp: usize, out: usize) -> candle_core::Result<(Weight, Vec<f32>)> {
    Ok((s.weight(out, inp)?, s.vec(&[out], "bias")?))
}

fn linear(s: Scope, inp: usize, out: usize, precision: Precision) -> candle_core::Result<Dense> {
    let (w, b) = dense(s, inp, out)?;
    Ok(Dense::new(w, b, inp, out, precision))
}

/// Layer norm under either naming (`weight`/`bias`, or the old `gamma`/`beta`).
fn norm(s: Scope, size: usize, eps: f64) -> candle_core::Result<Norm> {
    let pick = |names: [&'static str; 2]| -> &'static str {
        names
            .into_iter()
            .find(|n| s.contains(n))
            .unwrap_or(names[0])
    };
    Ok(Norm {
        weight: s.vec(&[size], pick(["weight", "gamma"]))?,
        bias: s.vec(&[size], pick(["bias", "beta"]))?,
        eps: eps as f32,
    })
}

/// The f32 tier and the int8 kernel the encoder runs on this CPU (within `MEMLOOP_SIMD`).
pub(crate) fn kernel_names() -> (&'static str, &'static str) {
    (simd::tier().name(), int8::Kernel::best().name())
}

/// Whether this CPU runs the int8 products with a vector kernel (not the scalar reference).
pub(crate) fn has_vector_int8() -> bool {
    int8::Kernel::best() != int8::Kernel::Scalar
}

/// Whether this encoder implements `c`: absolute positions and heads whose width is a
/// multiple of 8 (every released BERT-family embedder; others run on candle).
pub(crate) fn supports(c: &Config) -> bool {
    c.position_embedding_type == PositionEmbeddingType::Absolute
        && c.num_attention_heads > 0
        && c.hidden_size.is_multiple_of(c.num_attention_heads)
        && (c.hidden_size / c.num_attention_heads).is_multiple_of(8)
}

impl CpuBert {
    /// Loads the weights under the names candle's `BertModel` uses (optionally under `bert.`
    /// or `<model_type>.`), read straight from the mapped file: the word embeddings stay in
    /// the mapping, the dense layers are packed from it (one copy), at `precision`.
    pub(crate) fn load(
        tensors: &MappedTensors,
        c: &Config,
        precision: Precision,
    ) -> candle_core::Result<Self> {
        if !supports(c) {
            candle_core::bail!(
                "the native encoder needs absolute positions and heads a multiple of 8 wide"
            );
        }
        let mut prefixes = vec![String::new(), "bert.".to_string()];
        if let Some(t) = &c.model_type {
            prefixes.push(format!("{t}."));
        }
        let prefix = prefixes
            .into_iter()
            .find(|p| tensors.contains(&format!("{p}embeddings.word_embeddings.weight")))
            .unwrap_or_default();
        let root = |path: &str| Scope {
            tensors,
            prefix: format!("{prefix}{path}."),
        };
        let (h, eps) = (c.hidden_size, c.layer_norm_eps);
        let emb = root("embeddings");
        let token_types = emb
            .pp("token_type_embeddings")
            .get(&[c.type_vocab_size, h], "weight")?;
        let layers = (0..c.num_hidden_layers)
            .into_par_iter()
            .map(|i| {
                let l = root(&format!("encoder.layer.{i}"));
                let attn = l.pp("attention");
                let (q, k, v) = (
                    dense(attn.pp("self.query"), h, h)?,
                    dense(attn.pp("self.key"), h, h)?,
                    dense(attn.pp("self.value"), h, h)?,
                );
                Ok(Layer {
                    qkv: Dense::new(
                        Weight::stack(&[q.0, k.0, v.0]),
                        [q.1, k.1, v.1].concat(),
                        h,
                        3 * h,
                        precision,
                    ),
                    attn_out: linear(attn.pp("output.dense"), h, h, precision)?,
                    attn_norm: norm(attn.pp("output.LayerNorm"), h, eps)?,
                    up: linear(
                        l.pp("intermediate.dense"),
                        h,
                        c.intermediate_size,
                        precision,
                    )?,
                    down: linear(l.pp("output.dense"), c.intermediate_size, h, precision)?,
                    out_norm: norm(l.pp("output.LayerNorm"), h, eps)?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        Ok(CpuBert {
            word: emb.pp("word_embeddings").table(c.vocab_size, h)?,
            position: emb
                .pp("position_embeddings")
                .vec(&[c.max_position_embeddings, h], "weight")?,
            // No token-type table (type_vocab_size 0) adds nothing: one row of zeros.
            token_types: if token_types.is_empty() {
                vec![0.0; h]
            } else {
                token_types.to_vec()
            },
            emb_norm: norm(emb.pp("LayerNorm"), h, eps)?,
            layers,
            hidden: h,
            heads: c.num_attention_heads,
            vocab: c.vocab_size,
            max_positions: c.max_position_embeddings,
            act: c.hidden_act,
        })
    }

    /// Last hidden states of `seqs`, packed: row after row, `Σ len × hidden`, computed on the
    /// current rayon pool. Every token is of segment 0.
    ///
    /// # Errors
    /// A token id outside the vocabulary or a sequence longer than the position table.
    pub(crate) fn forward(&self, seqs: &[&[u32]]) -> Result<Vec<f32>, String> {
        self.forward_segments(seqs, &vec![usize::MAX; seqs.len()])
    }

    /// As [`CpuBert::forward`], the tokens of sequence `i` from position `second[i]` on of
    /// segment 1 (a cross-encoder's second text).
    ///
    /// # Errors
    /// As [`CpuBert::forward`]; a second segment where the model has one token type.
    pub(crate) fn forward_segments(
        &self,
        seqs: &[&[u32]],
        second: &[usize],
    ) -> Result<Vec<f32>, String> {
        if second.len() != seqs.len() {
            return Err(format!(
                "{} segment starts for {} sequences",
                second.len(),
                seqs.len()
            ));
        }
        let par = rayon::current_num_threads() > 1;
        let h = self.hidden;
        let packing = Packing::new(seqs.iter().map(|s| s.len()).collect());
        let rows = packing.total;
        let mut x = vec![0f32; rows * h];
        let mut at = 0;
        for (s, &second) in seqs.iter().zip(second) {
            if s.len() > self.max_positions {
                return Err(format!(
                    "{} tokens exceed the model's {} positions",
                    s.len(),
                    self.max_positions
                ));
            }
            if second < s.len() && self.token_types.len() < 2 * h {
                return Err("the model has one token type: it takes no second segment".into());
            }
            for (pos, &id) in s.iter().enumerate() {
                let id = id as usize;
                if id >= self.vocab {
                    return Err(format!(
                        "token id {id} is outside the vocabulary of {}",
                        self.vocab
                    ));
                }
                let row = &mut x[at * h..(at + 1) * h];
                let segment = usize::from(pos >= second);
                let p = &self.position[pos * h..][..h];
                let t = &self.token_types[segment * h..][..h];
                match &self.word {
                    Table::F32(word) => {
                        let w = &word[id * h..][..h];
                        for (((r, w), p), t) in row.iter_mut().zip(w).zip(p).zip(t) {
                            *r = w + p + t;
                        }
                    }
                    Table::F16(word) => {
                        for (((r, w), p), t) in row.iter_mut().zip(word.row(id)).zip(p).zip(t) {
                            *r = w + p + t;
                        }
                    }
                }
                at += 1;
            }
        }
        let Some(first) = self.layers.first() else {
            by_rows(par, &mut x, h, None, |_, b| {
                kernels::norm_rows(&self.emb_norm, b)
            });
            return Ok(x);
        };
        let inter = first.up.out();
        // An int8 encoder quantizes the inputs of the query/key/value and up products in the
        // pass that computes them (layer norm), the down product's in the activation's pass
        // (or in `feed_forward_int8`); the attention output is quantized by its product.
        let mut xq = first.qkv.quantized_input(rows);
        by_rows(par, &mut x, h, xq.as_mut(), |_, b| {
            kernels::norm_rows(&self.emb_norm, b);
        });
        let mut qkv = vec![0f32; rows * 3 * h];
        let mut ctx = vec![0f32; rows * h];
        let mut tmp = vec![0f32; rows * h];
        // The intermediate rows, product by product (`feed_forward_int8` keeps its own per task).
        let (mut up, mut upq) = (Vec::new(), None);
        for (i, layer) in self.layers.iter().enumerate() {
            layer.qkv.forward_from(&x, xq.as_ref(), rows, &mut qkv, par);
            attention::attend(&qkv, &packing, self.heads, h, &mut ctx, par);
            layer.attn_out.forward(&ctx, rows, &mut tmp, par);
            add_norm(par, &mut x, &tmp, h, &layer.attn_norm, xq.as_mut());
            let act: fn(&mut [f32]) = match self.act {
                HiddenAct::Gelu => gelu_erf,
                HiddenAct::GeluApproximate => kernels::gelu_tanh,
                HiddenAct::Relu => kernels::relu,
            };
            match (&layer.up, &layer.down, xq.as_ref()) {
                (Dense::Int8(u), Dense::Int8(d), Some(xq)) if rows * inter >= FUSED_FLOATS => {
                    feed_forward_int8(u, d, act, xq, &mut tmp, par);
                }
                _ => {
                    up.resize(rows * inter, 0.0);
                    if upq.is_none() {
                        upq = layer.down.quantized_input(rows);
                    }
                    layer.up.forward_from(&x, xq.as_ref(), rows, &mut up, par);
                    by_rows(par, &mut up, inter, upq.as_mut(), |_, b| act(b));
                    layer
                        .down
                        .forward_from(&up, upq.as_ref(), rows, &mut tmp, par);
                }
            }
            // The last layer's output feeds no product.
            let next = xq.as_mut().filter(|_| i + 1 < self.layers.len());
            add_norm(par, &mut x, &tmp, h, &layer.out_norm, next);
        }
        Ok(x)
    }
}

/// GELU (the erf form) in place: in AVX-512 intrinsics (`gelu_avx512.rs`) where the CPU has
/// them, else in AVX2 ones (`gelu_avx2.rs`), else `kernels::gelu_erf`.
fn gelu_erf(xs: &mut [f32]) {
    #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
    if simd::allows(simd::Tier::Avx512)
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: `gelu_avx512::gelu_erf` may only run on a CPU with AVX-512 F and FMA, and
        // both were just detected on this one.
        #[allow(unsafe_code)]
        return unsafe { gelu_avx512::gelu_erf(xs) };
    }
    #[cfg(target_arch = "x86_64")]
    if simd::allows(simd::Tier::Avx2)
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: `gelu_avx2::gelu_erf` may only run on a CPU with AVX2 and FMA, and both
        // were just detected on this one.
        #[allow(unsafe_code)]
        return unsafe { gelu_avx2::gelu_erf(xs) };
    }
    kernels::gelu_erf(xs);
}

/// A forward pass whose intermediate rows hold at least this many floats (1 MiB: 171 rows of
/// MiniLM's 1,536) runs an int8 layer's feed-forward block by [`feed_forward_int8`]. Below it
/// the rows stay in cache product by product, and tasks of (rows, panel) share the work
/// between threads better than a few blocks of rows do: a conversation turn of 86 tokens
/// embedded alone ran about 8% faster product by product, a chunk of 178 tokens about 15%
/// faster by blocks of rows.
const FUSED_FLOATS: usize = 1 << 18;

/// The most rows per task of [`feed_forward_int8`].
const FFN_ROWS: usize = 32;

/// Rows per task of [`feed_forward_int8`] for a pass of `rows` over `threads` threads: at most
/// [`FFN_ROWS`], and as many tasks as a multiple of `threads`, of equal size, so no thread
/// waits for another's last block (a chunk of 200 tokens alone made 7 blocks of 32 for 2
/// threads, one running 4 while the other ran 3; as 8 blocks of 25 each runs 4).
fn ffn_block_rows(rows: usize, threads: usize) -> usize {
    let blocks = rows.div_ceil(FFN_ROWS).next_multiple_of(threads.max(1));
    rows.div_ceil(blocks).max(1)
}

/// The feed-forward block of an int8 layer, `out = down(act(up(x)))` for the rows of `xq`
/// (`x` quantized), at most [`FFN_ROWS`] rows per task ([`ffn_block_rows`]) over the rayon
/// pool when `parallel`. Each task runs both products and the activation on its own rows, so
/// the intermediate rows (at most `FFN_ROWS × inter` floats, 192 KiB for MiniLM) stay in the
/// core's cache. Run product by product, a batch's intermediate rows (35 MB for 32 chunks of
/// 200 tokens) went through memory three times: written by the up product, read and written
/// by the activation, read again to be quantized. The result is the same, bit for bit: every
/// step is row by row.
fn feed_forward_int8(
    up: &QuantLinear,
    down: &QuantLinear,
    act: fn(&mut [f32]),
    xq: &QuantRows,
    out: &mut [f32],
    parallel: bool,
) {
    let (h, inter) = (down.out, up.out);
    let threads = if parallel {
        rayon::current_num_threads()
    } else {
        1
    };
    let block = ffn_block_rows(out.len() / h, threads);
    let one = |scratch: &mut Vec<f32>, (b, out): (usize, &mut [f32])| {
        let rows = out.len() / h;
        let mid = &mut scratch[..rows * inter];
        up.forward_quantized_rows(xq, b * block, mid, false);
        act(mid);
        let q = int8::quantize_rows(mid, inter, false);
        down.forward_quantized(&q, rows, out, false);
    };
    let scratch = || vec![0f32; block * inter];
    if parallel {
        out.par_chunks_mut(block * h)
            .enumerate()
            .for_each_init(scratch, one);
    } else {
        let mut s = scratch();
        out.chunks_mut(block * h)
            .enumerate()
            .for_each(|c| one(&mut s, c));
    }
}

/// Rows per task of the element-wise passes.
const ROWS_PER_TASK: usize = 16;

/// Applies `f` to blocks of whole `width`-wide rows of `xs` (with the index of the block's
/// first row), spread over the rayon pool when `parallel`; with `q`, each block is then
/// quantized into it while still in cache.
fn by_rows(
    parallel: bool,
    xs: &mut [f32],
    width: usize,
    q: Option<&mut QuantRows>,
    f: impl Fn(usize, &mut [f32]) + Send + Sync,
) {
    let per = width * ROWS_PER_TASK;
    match q {
        Some(q) => {
            let one = |((i, x), mut b): ((usize, &mut [f32]), int8::QuantBlock)| {
                f(i * ROWS_PER_TASK, x);
                b.fill(x, width);
            };
            let blocks = q.blocks_mut(ROWS_PER_TASK);
            if parallel {
                xs.par_chunks_mut(per).enumerate().zip(blocks).for_each(one);
            } else {
                xs.chunks_mut(per).enumerate().zip(blocks).for_each(one);
            }
        }
        None if parallel => xs
            .par_chunks_mut(per)
            .enumerate()
            .for_each(|(i, x)| f(i * ROWS_PER_TASK, x)),
        None => f(0, xs),
    }
}

/// `x = norm(x + residual)`, row by row; with `q`, `x` quantized into it as well.
fn add_norm(
    parallel: bool,
    x: &mut [f32],
    residual: &[f32],
    width: usize,
    norm: &Norm,
    q: Option<&mut QuantRows>,
) {
    by_rows(parallel, x, width, q, |row, x| {
        kernels::add_norm_rows(norm, x, &residual[row * width..][..x.len()]);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_int8_feed_forward_by_blocks_of_rows_equals_the_product_by_product_path() {
        // 70 rows: blocks of 24, 24 and 22 alone, of 18 and a short one on two threads;
        // widths with a narrow last panel.
        let (rows, h, inter) = (70, 72, 200);
        let wave = |n: usize, f: f32, a: f32| -> Vec<f32> {
            (0..n).map(|i| (i as f32 * f).sin() * a).collect()
        };
        let kernel = int8::Kernel::best();
        let up = QuantLinear::new(
            &wave(inter * h, 0.11, 0.1),
            wave(inter, 0.3, 0.2),
            h,
            inter,
            kernel,
        );
        let down = QuantLinear::new(
            &wave(h * inter, 0.07, 0.05),
            wave(h, 0.5, 0.1),
            inter,
            h,
            kernel,
        );
        let xq = int8::quantize_rows(&wave(rows * h, 0.37, 3.0), h, false);
        // Product by product, as the encoder ran it before.
        let mut mid = vec![0f32; rows * inter];
        up.forward_quantized(&xq, rows, &mut mid, false);
        gelu_erf(&mut mid);
        let q = int8::quantize_rows(&mid, inter, false);
        let mut want = vec![0f32; rows * h];
        down.forward_quantized(&q, rows, &mut want, false);
        for parallel in [false, true] {
            let mut got = vec![f32::NAN; rows * h];
            feed_forward_int8(&up, &down, gelu_erf, &xq, &mut got, parallel);
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(g, w)| g.to_bits() == w.to_bits()),
                "parallel {parallel}"
            );
        }
    }

    #[test]
    fn feed_forward_blocks_are_equal_and_a_multiple_of_the_threads() {
        // A chunk of 200 tokens: 8 blocks of 25 for 2 threads, not 7 of 32.
        assert_eq!(ffn_block_rows(200, 2), 25);
        assert_eq!(ffn_block_rows(200, 1), 29);
        assert_eq!(ffn_block_rows(6400, 2), 32);
        assert_eq!(ffn_block_rows(70, 2), 18);
        assert_eq!(ffn_block_rows(1, 16), 1);
        for rows in 1..300 {
            for threads in [1, 2, 3, 8] {
                let b = ffn_block_rows(rows, threads);
                assert!(
                    (1..=FFN_ROWS).contains(&b),
                    "{rows} rows, {threads} threads: {b}"
                );
                assert!(rows.div_ceil(b) <= rows.div_ceil(FFN_ROWS).next_multiple_of(threads));
            }
        }
    }
}
