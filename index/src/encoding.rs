//! How an index stores the vectors its graph searches compare against: f32 as given, or a
//! compressed code per vector (bf16, or int8 with a per-vector scale). The f32 vectors are
//! always kept too: inserts link the graph on exact similarities, and a compressed search
//! re-scores its candidates exactly before answering, so recall at a given `ef` stays that of
//! f32 while the hot loop reads a half or a quarter of the bytes.
//!
//! Code layouts (one per node, in node order in the codes section of the file):
//! - `bf16`: `dim` little-endian u16, each the upper half of the f32 rounded to nearest even;
//! - `int8`: the scale `s` as f32 (4 bytes, little-endian), then `dim` i8 codes `c` with
//!   `x ≈ s · c`, `s = max|x| / 127`.

use std::fmt;
use std::str::FromStr;

use crate::error::IndexError;

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
            VectorEncoding::Int8 => 4 + dim,
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
                out.extend_from_slice(&scale.to_le_bytes());
                out.extend(codes.map(|c| c as u8));
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

/// The scale stored at the start of an int8 code (0 for a code too short to hold one).
#[inline]
pub(crate) fn int8_scale(code: &[u8]) -> f32 {
    match code.first_chunk::<4>() {
        Some(b) => f32::from_le_bytes(*b),
        None => 0.0,
    }
}

/// The codes after the scale of an int8 code.
#[inline]
pub(crate) fn int8_codes(code: &[u8]) -> &[u8] {
    code.get(4..).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let s = int8_scale(&out);
        for (x, c) in v.iter().zip(int8_codes(&out)) {
            assert!((x - s * f32::from(*c as i8)).abs() <= s / 2.0 + 1e-7);
        }
        for &x in &v {
            let back = crate::simd::bf16::bf16_to_f32(to_bf16(x));
            assert!((x - back).abs() <= x.abs() / 256.0);
        }
        let (scale, mut codes) = quantize_i8(&[0.0; 4]);
        assert_eq!(scale, 0.0);
        assert!(codes.all(|c| c == 0));
    }
}
