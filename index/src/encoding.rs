//! How an index stores the vectors its graph searches compare against: f32 as given, or a
//! compressed code per vector (bf16, or int8 with a per-vector scale).
//!
//! - A bf16 index keeps the f32 vectors too: inserts link the graph on exact similarities, and
//!   a search re-scores its candidates exactly before answering.
//! - An int8 index keeps only its codes (a quarter of the f32 bytes; the caller's store holds
//!   the f32 vectors once). A search walks the graph on the high 4 bits of each code against an
//!   8-bit query ([`quantize_query_i8`], `search::scorer::Nibble`): half the bytes per node, the
//!   walk's cost being the cache lines it waits for. It then re-scores every candidate it kept
//!   on the whole code against a 15-bit query ([`quantize_query`]), which loses nothing that
//!   matters (its rounding error is 1/256 of the codes'): those scores are the asymmetric
//!   distance of the codes. Graph construction compares two stored nodes on their whole codes.
//!
//! Code layouts (one per node):
//! - `bf16`: `dim` little-endian u16, each the upper half of the f32 rounded to nearest even;
//! - `int8`: values `c` with `x ≈ s · c`, `s = max|x| / 127`, each stored as `u = c + 128` in
//!   two nibble planes of 64 bytes per block of 128 dimensions (the last block padded with
//!   `c = 0`; layout in [`crate::simd::int8`]): the high planes (`u >> 4`), then the low planes
//!   (`u & 15`), then the scale `s` as f32 (4 bytes, little-endian). A graph walk scores nodes on
//!   the high planes alone (3 cache lines at 384-d), then re-scores its best candidates on both.
//!   In the file, the codes section holds every node's planes in node order, then every scale
//!   (so a walk reads the scales from one dense array).

use std::fmt;
use std::str::FromStr;

use crate::error::IndexError;
use crate::simd::int8::{unpack, BLOCK_DIMS, PLANE_BLOCK};

/// How an index stores the vectors its searches walk; chosen per index in
/// [`crate::Params::vectors`] and recorded in the file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum VectorEncoding {
    /// Searches compare against the f32 vectors themselves (4 bytes per dimension).
    #[default]
    F32,
    /// Searches compare against bf16 copies (2 bytes per dimension), then re-score exactly.
    Bf16,
    /// Searches compare against int8 codes with a per-vector scale (1 byte per dimension + 4),
    /// then re-score exactly.
    Int8,
}

impl VectorEncoding {
    /// Every encoding, in tag order.
    pub const ALL: [VectorEncoding; 3] = [
        VectorEncoding::F32,
        VectorEncoding::Bf16,
        VectorEncoding::Int8,
    ];

    /// Bytes of one code for `dim`-dimensional vectors (0 for f32, which has no code).
    pub fn code_len(self, dim: usize) -> usize {
        match self {
            VectorEncoding::F32 => 0,
            VectorEncoding::Bf16 => 2 * dim,
            VectorEncoding::Int8 => int8_planes_len(dim) + 4,
        }
    }

    /// Bytes of one node's code where codes lie side by side (in a file's codes section, or a
    /// node's own): the whole code, less an int8 code's scale, which is kept apart.
    pub(crate) fn code_stride(self, dim: usize) -> usize {
        match self {
            VectorEncoding::Int8 => int8_planes_len(dim),
            VectorEncoding::F32 | VectorEncoding::Bf16 => self.code_len(dim),
        }
    }

    /// A code made by [`VectorEncoding::encode_into`] as a node keeps it: an int8 code's
    /// planes and its scale; any other code whole, with scale 0.
    pub(crate) fn split_scale(self, code: &[u8]) -> (&[u8], f32) {
        match self {
            VectorEncoding::Int8 => int8_parts(code),
            VectorEncoding::F32 | VectorEncoding::Bf16 => (code, 0.0),
        }
    }

    /// The lowercase name: `f32`, `bf16` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            VectorEncoding::F32 => "f32",
            VectorEncoding::Bf16 => "bf16",
            VectorEncoding::Int8 => "int8",
        }
    }

    /// The number recorded in the file header.
    pub(crate) fn tag(self) -> u32 {
        match self {
            VectorEncoding::F32 => 0,
            VectorEncoding::Bf16 => 1,
            VectorEncoding::Int8 => 2,
        }
    }

    /// The encoding of a header tag, if known.
    pub(crate) fn from_tag(tag: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.tag() == tag)
    }

    /// Appends the code of `v` to `out` (nothing for f32).
    pub(crate) fn encode_into(self, v: &[f32], out: &mut Vec<u8>) {
        match self {
            VectorEncoding::F32 => {}
            VectorEncoding::Bf16 => out.extend(v.iter().flat_map(|&x| to_bf16(x).to_le_bytes())),
            VectorEncoding::Int8 => {
                let (scale, codes) = quantize_i8(v);
                pack_int8_planes(codes, v.len(), out);
                out.extend_from_slice(&scale.to_le_bytes());
            }
        }
    }
}

impl fmt::Display for VectorEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for VectorEncoding {
    type Err = IndexError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| IndexError::InvalidParameter {
                name: "vectors",
                reason: format!("unknown vector encoding {s:?}: use f32, bf16 or int8"),
            })
    }
}

/// f32 → bf16, rounding to nearest even (finite inputs; unit vectors are finite).
pub(crate) fn to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1));
    (rounded >> 16) as u16
}

/// Symmetric per-vector int8 quantisation: the scale `max|x| / 127` (0 for a zero vector) and
/// the codes `round(x / scale)`, each in -127..=127.
pub(crate) fn quantize_i8(v: &[f32]) -> (f32, impl Iterator<Item = i8> + '_) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 && max.is_finite() {
        max / 127.0
    } else {
        0.0
    };
    let inv = if scale > 0.0 { 1.0 / scale } else { 0.0 };
    (
        scale,
        v.iter()
            .map(move |&x| (x * inv).round().clamp(-127.0, 127.0) as i8),
    )
}

/// Largest magnitude of a query value in [`quantize_query`] (15 bits and a sign).
const QUERY_MAX: f32 = 32_767.0;

/// A query for int8 codes at 16-bit precision: the scale and the values `x / scale` rounded to
/// the nearest integer (ties to even).
///
/// The int8 kernels sum `query[i] · code[i]` in i32 lanes, and `|code[i]| ≤ 127`, so the sum
/// stays below 2^31 while `Σ|query[i]| ≤ (2^31 - 1) / 127`. The largest value is therefore
/// 32,767 unless the vector's L1 norm over its largest value is high enough (over 516
/// dimensions of equal size) to need fewer steps; a unit vector of any length fits.
pub(crate) fn quantize_query(v: &[f32]) -> (f32, Vec<i16>) {
    let (max, l1) = max_and_l1(v);
    if !(max > 0.0 && max.is_finite()) {
        return (0.0, vec![0; v.len()]);
    }
    let budget = f64::from(i32::MAX) / 127.0;
    // Each value rounds up by at most a half: leave room for that over every dimension.
    let top = ((budget - v.len() as f64) * f64::from(max) / l1)
        .floor()
        .clamp(1.0, f64::from(QUERY_MAX)) as f32;
    let scale = max / top;
    (
        scale,
        rounded_steps(v, scale, top).map(|x| x as i16).collect(),
    )
}

/// A query for the high planes of int8 codes ([`crate::simd::nibble`]): the scale
/// `max|x| / 127` and the values `x / scale` rounded to the nearest integer (ties to even),
/// zero up to `len` (whole blocks).
pub(crate) fn quantize_query_i8(v: &[f32], len: usize) -> (f32, Vec<i8>) {
    let (max, _) = max_and_l1(v);
    let mut q = vec![0i8; len.max(v.len())];
    if !(max > 0.0 && max.is_finite()) {
        return (0.0, q);
    }
    let scale = max / 127.0;
    for (o, x) in q.iter_mut().zip(rounded_steps(v, scale, 127.0)) {
        *o = x as i8;
    }
    (scale, q)
}

/// The largest magnitude and the L1 norm of a query, in eight lanes each: independent chains
/// the compiler vectorises (a fold is one chain of dependent steps, a microsecond per query at
/// 384-d).
fn max_and_l1(v: &[f32]) -> (f32, f64) {
    let (mut maxes, mut sums) = ([0f32; 8], [0f64; 8]);
    let chunks = v.chunks_exact(8);
    for x in chunks.remainder() {
        maxes[0] = if x.abs() > maxes[0] {
            x.abs()
        } else {
            maxes[0]
        };
        sums[0] += f64::from(x.abs());
    }
    for c in chunks {
        for ((m, s), x) in maxes.iter_mut().zip(&mut sums).zip(c) {
            *m = if x.abs() > *m { x.abs() } else { *m };
            *s += f64::from(x.abs());
        }
    }
    (maxes.iter().fold(0f32, |m, &x| m.max(x)), sums.iter().sum())
}

/// Each `x / scale`, within ±`top`, rounded to the nearest integer, ties to even, by adding
/// and taking away 1.5·2²³ (exact for |x| ≤ 2²²; `top` ≤ 32,767): no libm `roundf` call per
/// value, so the loop vectorises.
fn rounded_steps(v: &[f32], scale: f32, top: f32) -> impl Iterator<Item = f32> + '_ {
    const ROUND: f32 = 12_582_912.0;
    let inv = 1.0 / scale;
    v.iter()
        .map(move |&x| ((x * inv).clamp(-top, top) + ROUND) - ROUND)
}

/// Bytes of an int8 code's two planes for `dim`-dimensional vectors: 128 per block of 128
/// dimensions.
pub(crate) fn int8_planes_len(dim: usize) -> usize {
    dim.div_ceil(BLOCK_DIMS) * 2 * PLANE_BLOCK
}

/// Appends the nibble planes of `values` (the first `dim`, the last block padded with 0) to
/// `out`: every block's high plane, then every block's low plane.
pub(crate) fn pack_int8_planes(values: impl Iterator<Item = i8>, dim: usize, out: &mut Vec<u8>) {
    let blocks = dim.div_ceil(BLOCK_DIMS);
    let mut u: Vec<u8> = values.take(dim).map(|c| c as u8 ^ 0x80).collect();
    u.resize(blocks * BLOCK_DIMS, 0x80);
    let start = out.len();
    out.resize(start + blocks * 2 * PLANE_BLOCK, 0);
    let (hi, lo) = out[start..].split_at_mut(blocks * PLANE_BLOCK);
    for (b, vals) in u.chunks_exact(BLOCK_DIMS).enumerate() {
        for j in 0..PLANE_BLOCK {
            let (a, z) = (vals[j], vals[j + PLANE_BLOCK]);
            hi[b * PLANE_BLOCK + j] = (a >> 4) | (z & 0xf0);
            lo[b * PLANE_BLOCK + j] = (a & 15) | (z << 4);
        }
    }
}

/// A fresh node's int8 code split into its planes and its scale (the scale last; empty planes
/// and 0 for a code too short to hold one).
#[inline]
pub(crate) fn int8_parts(code: &[u8]) -> (&[u8], f32) {
    match code.split_last_chunk::<4>() {
        Some((planes, scale)) => (planes, f32::from_le_bytes(*scale)),
        None => (&[], 0.0),
    }
}

/// The high planes of an int8 code's planes (their first half).
#[inline]
pub(crate) fn int8_high(planes: &[u8]) -> &[u8] {
    &planes[..planes.len() / 2]
}

/// An int8 code as a query for other codes: its values widened (zero past the vector), with
/// its scale (so two codes compare as the dot product of their dequantised vectors).
pub(crate) fn code_as_query(planes: &[u8], scale: f32) -> (f32, Vec<i16>) {
    (scale, unpack(planes).into_iter().map(i16::from).collect())
}

/// The `dim`-dimensional vector an int8 code stands for: `scale · value`.
pub(crate) fn dequantize_i8(planes: &[u8], scale: f32, dim: usize) -> Vec<f32> {
    unpack(planes)
        .into_iter()
        .take(dim)
        .map(|c| scale * f32::from(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value lands within half a step of `x / scale`, the largest on ±32,767, whatever
    /// the length (the eight-lane maximum and sum, their tails included).
    #[test]
    fn a_query_rounds_each_value_to_its_nearest_step() {
        for n in [1, 7, 8, 9, 383, 384, 385] {
            let mut v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.618).fract() - 0.5).collect();
            v[n / 2] = -1.5;
            let (scale, q) = quantize_query(&v);
            let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
            assert_eq!(scale, max / QUERY_MAX, "n {n}");
            for (x, &q) in v.iter().zip(&q) {
                assert!(
                    (f32::from(q) - x / scale).abs() <= 0.5 + 1e-3,
                    "n {n}: {x} → {q}"
                );
            }
            assert_eq!(q[n / 2].unsigned_abs(), 32_767, "n {n}");
        }
        assert_eq!(quantize_query(&[0.0; 5]), (0.0, vec![0; 5]));
    }

    #[test]
    fn names_parse_back_and_tags_round_trip() {
        for e in VectorEncoding::ALL {
            assert_eq!(e.name().parse::<VectorEncoding>().unwrap(), e);
            assert_eq!(VectorEncoding::from_tag(e.tag()), Some(e));
        }
        assert!("f16".parse::<VectorEncoding>().is_err());
        assert_eq!(VectorEncoding::from_tag(3), None);
    }

    #[test]
    fn codes_have_their_length_and_decode_close_to_the_vector() {
        let v: Vec<f32> = (0..384)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) / 9000.0)
            .collect();
        for e in VectorEncoding::ALL {
            let mut out = Vec::new();
            e.encode_into(&v, &mut out);
            assert_eq!(out.len(), e.code_len(v.len()), "{e}");
        }
        let mut out = Vec::new();
        VectorEncoding::Int8.encode_into(&v, &mut out);
        let (planes, s) = int8_parts(&out);
        assert_eq!(planes.len(), 384);
        let values = unpack(planes);
        for (x, c) in v.iter().zip(&values) {
            assert!((x - s * f32::from(*c)).abs() <= s / 2.0 + 1e-7);
        }
        // A dimension that is not a whole number of blocks pads with zero values.
        let mut short = Vec::new();
        VectorEncoding::Int8.encode_into(&v[..200], &mut short);
        assert_eq!(short.len(), 256 + 4);
        let (planes, s2) = int8_parts(&short);
        let values2 = unpack(planes);
        assert!(values2[200..].iter().all(|&c| c == 0));
        assert_eq!(dequantize_i8(planes, s2, 200).len(), 200);
        for &x in &v {
            let back = crate::simd::bf16::bf16_to_f32(to_bf16(x));
            assert!((x - back).abs() <= x.abs() / 256.0);
        }
        let (scale, mut codes) = quantize_i8(&[0.0; 4]);
        assert_eq!(scale, 0.0);
        assert!(codes.all(|c| c == 0));
    }

    #[test]
    fn a_fine_query_scores_codes_as_their_dequantised_vectors() {
        let v: Vec<f32> = (0..384)
            .map(|i| ((i * 31 % 97) as f32 - 48.0) / 400.0)
            .collect();
        let q: Vec<f32> = (0..384)
            .map(|i| ((i * 17 % 89) as f32 - 44.0) / 350.0)
            .collect();
        let mut code = Vec::new();
        VectorEncoding::Int8.encode_into(&v, &mut code);
        let (qs, qv) = quantize_query(&q);
        let (planes, scale) = int8_parts(&code);
        let got = crate::simd::int8::dot_i8_scalar(&qv, planes) as f32 * qs * scale;
        let want: f32 = q
            .iter()
            .zip(dequantize_i8(planes, scale, 384))
            .map(|(a, b)| a * b)
            .sum();
        assert!(
            (got - want).abs() < 1e-4 * want.abs().max(1.0),
            "{got} vs {want}"
        );
        // Two codes compare as their dequantised vectors.
        let (cs, cq) = code_as_query(planes, scale);
        let self_dot = crate::simd::int8::dot_i8_scalar(&cq, planes) as f32 * cs * cs;
        let d = dequantize_i8(planes, scale, 384);
        let want_self: f32 = d.iter().map(|x| x * x).sum();
        assert!((self_dot - want_self).abs() < 1e-4);
    }

    #[test]
    fn a_fine_query_never_overflows_the_kernels_sum() {
        // Every dimension at the largest value: the worst case for the i32 sum.
        for dim in [1usize, 384, 516, 517, 4096, 65_536] {
            let v = vec![1.0 / (dim as f32).sqrt(); dim];
            let (scale, mut q) = quantize_query(&v);
            assert!(scale > 0.0);
            let l1: i64 = q.iter().map(|&x| i64::from(x).abs()).sum();
            assert!(l1 * 127 <= i64::from(i32::MAX), "dim {dim}: {l1}");
            let mut code = Vec::new();
            pack_int8_planes(std::iter::repeat(127), dim, &mut code);
            q.resize(int8_planes_len(dim), 0);
            let _ = crate::simd::int8::dot_i8_scalar(&q, &code); // no overflow panic in debug
        }
        assert_eq!(quantize_query(&[0.0; 3]), (0.0, vec![0; 3]));
    }
}
