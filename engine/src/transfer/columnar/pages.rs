//! A pre-scan of a Parquet file's page headers before the reader sees it. The `parquet`
//! crate believes a page header's declared sizes: it allocates a page's declared
//! uncompressed size before decompressing it, and a dictionary's declared value count before
//! reading a value (a 16 KB file declaring 400 million dictionary values made it allocate
//! 3.2 GB; found by the `columnar_parquet` fuzz target). Every header of every column chunk is
//! read here (Thrift compact protocol, only the fields that size allocations), and a file
//! whose declared sizes its bytes cannot hold is refused.

use std::fs::File;

use parquet::basic::{Compression, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaData;

/// The largest uncompressed page accepted: a page holds at least one value, and the longest
/// a memory's text may be is 16 MiB (with its JSON escapes and shorter versions, far below).
const MAX_PAGE: u64 = 128 << 20;
/// How much a compressed page may expand (Snappy, the codec memloop writes, stays far below).
const MAX_EXPANSION: u64 = 256;
/// The most bytes of a page header read (statistics included).
const MAX_HEADER: u64 = 1 << 20;

/// What the header of one page declares.
#[derive(Debug, Default, PartialEq)]
struct PageHeader {
    uncompressed: i64,
    compressed: i64,
    /// For a dictionary page, its value count.
    dictionary_values: Option<i64>,
}

/// Checks every page header of every column chunk of `file` (of `size` bytes) against the
/// bytes that hold it, and that all pages together decode to at most `budget` bytes; `Err`
/// says what is wrong.
pub(super) fn prescan(
    file: &File,
    metadata: &ParquetMetaData,
    size: u64,
    budget: u64,
) -> Result<(), String> {
    let mut total: u64 = 0;
    for rg in metadata.row_groups() {
        for col in rg.columns() {
            let start = col
                .dictionary_page_offset()
                .unwrap_or(col.data_page_offset());
            let len = col.compressed_size();
            let (Ok(start), Ok(len)) = (u64::try_from(start), u64::try_from(len)) else {
                return Err("a column chunk with a negative offset or length".into());
            };
            let end = start
                .checked_add(len)
                .filter(|&e| e <= size)
                .ok_or("a column chunk past the end of the file")?;
            let uncompressed_codec = col.compression() == Compression::UNCOMPRESSED;
            let value_bytes = match col.column_type() {
                PhysicalType::BOOLEAN => 0,
                PhysicalType::INT32 | PhysicalType::FLOAT => 4,
                PhysicalType::INT64 | PhysicalType::DOUBLE => 8,
                PhysicalType::INT96 => 12,
                // A byte array's length prefix, or a fixed-length value of at least a byte.
                PhysicalType::BYTE_ARRAY => 4,
                PhysicalType::FIXED_LEN_BYTE_ARRAY => 1,
            };
            let mut pos = start;
            while pos < end {
                let (header, used) = header_at(file, pos, end)?;
                let (Ok(compressed), Ok(uncompressed)) = (
                    u64::try_from(header.compressed),
                    u64::try_from(header.uncompressed),
                ) else {
                    return Err("a page with a negative size".into());
                };
                let page_end = pos
                    .checked_add(used as u64)
                    .and_then(|p| p.checked_add(compressed))
                    .filter(|&p| p <= end)
                    .ok_or("a page past the end of its column chunk")?;
                let most = if uncompressed_codec {
                    compressed
                } else {
                    compressed.saturating_mul(MAX_EXPANSION).max(64 << 10)
                };
                if uncompressed > MAX_PAGE || uncompressed > most {
                    return Err(format!(
                        "a page declares {uncompressed} bytes from {compressed}: not an export"
                    ));
                }
                if let Some(n) = header.dictionary_values {
                    let n = u64::try_from(n).map_err(|_| "a negative dictionary size")?;
                    if value_bytes > 0 && n.saturating_mul(value_bytes) > uncompressed {
                        return Err(format!(
                            "a dictionary page declares {n} values in {uncompressed} bytes"
                        ));
                    }
                }
                total = total.saturating_add(uncompressed);
                if total > budget {
                    return Err(format!(
                        "pages that decode to more than {budget} bytes from a {size}-byte file: a decompression bomb, not an export"
                    ));
                }
                pos = page_end;
            }
        }
    }
    Ok(())
}

/// The page header at `pos` of a chunk ending at `end`: read from a small window first (a
/// header without statistics is a few dozen bytes), a wider one only when it does not fit,
/// so the scan does not read the pages' data as well.
fn header_at(file: &File, pos: u64, end: u64) -> Result<(PageHeader, usize), String> {
    let mut window = FIRST_WINDOW;
    loop {
        let len = (end - pos).min(window);
        let mut buf = vec![0u8; len as usize];
        crate::platform::read_exact_at(file, &mut buf, pos)
            .map_err(|e| format!("reading a page header: {e}"))?;
        match read_page_header(&buf) {
            Err(e) if e == ENDS_EARLY && len == window && window < MAX_HEADER => window *= 16,
            done => return done,
        }
    }
}

/// Bytes read first for a page header.
const FIRST_WINDOW: u64 = 4 << 10;
/// The error of a header cut off by the end of what was read.
const ENDS_EARLY: &str = "a page header ends early";

/// Reads a Thrift compact `PageHeader` at the start of `buf`: the fields that size
/// allocations, and how many bytes the header took.
fn read_page_header(buf: &[u8]) -> Result<(PageHeader, usize), String> {
    let mut r = Compact { buf, pos: 0 };
    let mut header = PageHeader::default();
    r.read_struct(0, &mut |r, id, ty| match (id, ty) {
        (2, I32) => {
            header.uncompressed = r.varint_signed()?;
            Ok(true)
        }
        (3, I32) => {
            header.compressed = r.varint_signed()?;
            Ok(true)
        }
        (7, STRUCT) => {
            let mut values = None;
            r.read_struct(1, &mut |r, id, ty| match (id, ty) {
                (1, I32) => {
                    values = Some(r.varint_signed()?);
                    Ok(true)
                }
                _ => Ok(false),
            })?;
            header.dictionary_values = values;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok((header, r.pos))
}

const I32: u8 = 5;
const STRUCT: u8 = 12;
/// Nesting past this is refused (Thrift's own readers stop at 64).
const MAX_DEPTH: usize = 32;

/// A cursor over Thrift compact-protocol bytes.
struct Compact<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Compact<'_> {
    fn byte(&mut self) -> Result<u8, String> {
        let b = *self.buf.get(self.pos).ok_or(ENDS_EARLY)?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut out = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err("a varint of more than ten bytes".into())
    }

    fn varint_signed(&mut self) -> Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn skip(&mut self, n: u64) -> Result<(), String> {
        let n = usize::try_from(n).map_err(|_| "a length past the header")?;
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        self.pos = end.ok_or(ENDS_EARLY)?;
        Ok(())
    }

    /// Reads a struct's fields, handing each to `field(reader, id, type)`, which reads it and
    /// returns true, or returns false to have it skipped.
    fn read_struct(
        &mut self,
        depth: usize,
        field: &mut dyn FnMut(&mut Self, i16, u8) -> Result<bool, String>,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("a page header nested too deep".into());
        }
        let mut last: i16 = 0;
        loop {
            let b = self.byte()?;
            let ty = b & 0x0f;
            if ty == 0 {
                return Ok(());
            }
            let delta = (b >> 4) as i16;
            let id = if delta == 0 {
                i16::try_from(self.varint_signed()?).map_err(|_| "a field id out of range")?
            } else {
                last.checked_add(delta).ok_or("a field id out of range")?
            };
            last = id;
            if !field(self, id, ty)? {
                self.skip_value(ty, depth)?;
            }
        }
    }

    /// Skips one value of compact type `ty`.
    fn skip_value(&mut self, ty: u8, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("a page header nested too deep".into());
        }
        match ty {
            1 | 2 => Ok(()), // a boolean field carries its value in the type
            3 => self.skip(1),
            4..=6 => self.varint().map(|_| ()),
            7 => self.skip(8),
            8 => {
                let n = self.varint()?;
                self.skip(n)
            }
            9 | 10 => {
                let b = self.byte()?;
                let n = match b >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                let elem = b & 0x0f;
                for _ in 0..n {
                    // A boolean element is a byte of its own.
                    if elem == 1 || elem == 2 {
                        self.skip(1)?;
                    } else {
                        self.skip_value(elem, depth + 1)?;
                    }
                    if self.pos >= self.buf.len() {
                        return Err(ENDS_EARLY.into());
                    }
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                for _ in 0..n {
                    self.skip_value(kv >> 4, depth + 1)?;
                    self.skip_value(kv & 0x0f, depth + 1)?;
                    if self.pos >= self.buf.len() {
                        return Err(ENDS_EARLY.into());
                    }
                }
                Ok(())
            }
            12 => self.read_struct(depth + 1, &mut |_, _, _| Ok(false)),
            13 => self.skip(16),
            _ => Err(format!("a page header with an unknown field type {ty}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact header: type 2 (dictionary), sizes, a dictionary header with `values`.
    fn header(uncompressed: i64, compressed: i64, values: i64) -> Vec<u8> {
        let zz = |v: i64| {
            let mut v = ((v << 1) ^ (v >> 63)) as u64;
            let mut out = Vec::new();
            loop {
                let b = (v & 0x7f) as u8;
                v >>= 7;
                if v == 0 {
                    out.push(b);
                    return out;
                }
                out.push(b | 0x80);
            }
        };
        let mut h = vec![0x15];
        h.extend(zz(2));
        h.push(0x15);
        h.extend(zz(uncompressed));
        h.push(0x15);
        h.extend(zz(compressed));
        h.push(0x4c); // field 7 (delta 4), struct
        h.push(0x15);
        h.extend(zz(values));
        h.push(0x00);
        h.push(0x00);
        h
    }

    #[test]
    fn reads_the_sizes_a_header_declares() {
        let bytes = header(1000, 400, 125);
        let (h, used) = read_page_header(&bytes).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(
            h,
            PageHeader {
                uncompressed: 1000,
                compressed: 400,
                dictionary_values: Some(125)
            }
        );
        assert!(read_page_header(&bytes[..bytes.len() - 3]).is_err());
        assert!(read_page_header(&[0x1c; 64]).is_err(), "nesting is bounded");
    }
}
