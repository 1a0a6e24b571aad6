//! What the attention kernels (`attention.rs`, `attention_avx512.rs`) read of one head, laid
//! out so their inner loops make contiguous loads: its keys transposed (both kernels) and a
//! block of its query rows gathered (the portable kernel; the AVX-512 one broadcasts each
//! query value straight from its row).

/// Head `col..col + d`'s keys of a sequence (`rows`, `len × 3·hidden`) transposed to
/// `d × padded`, zeros past `len`.
#[inline(always)]
pub(super) fn transposed_keys(
    rows: &[f32],
    len: usize,
    col: usize,
    d: usize,
    hidden: usize,
    padded: usize,
) -> Vec<f32> {
    let mut keys = vec![0f32; d * padded];
    for j in 0..len {
        let k = &rows[j * 3 * hidden + hidden + col..][..d];
        for (c, &v) in k.iter().enumerate() {
            keys[c * padded + j] = v;
        }
    }
    keys
}

/// Query rows `i0..i0 + n` of head `col..col + d` (`n = q.len() / d`; past `len` the last
/// row repeated: computed, then not written), scaled by `scale`, into `q` column-major
/// (`d × n`): each column's `n` values one load apart from the next column's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn gather_queries(
    rows: &[f32],
    len: usize,
    col: usize,
    d: usize,
    hidden: usize,
    i0: usize,
    scale: f32,
    q: &mut [f32],
) {
    let n = q.len() / d;
    for r in 0..n {
        let i = (i0 + r).min(len - 1);
        for (c, &x) in rows[i * 3 * hidden + col..][..d].iter().enumerate() {
            q[c * n + r] = x * scale;
        }
    }
}
