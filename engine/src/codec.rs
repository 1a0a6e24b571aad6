//! Bounded bincode decoding: no length field read from a file can make the decoder allocate
//! more than a small multiple of the bytes that hold it.
//!
//! bincode (`=2.0.1`, standard configuration) allocates a string or vector as soon as it reads
//! its length, before checking that the bytes are there: a crafted record claiming 2^62 bytes
//! aborts the process. Its `with_limit` configuration checks every claim against a limit first,
//! but the limit is a compile-time constant, so the record's own length picks one of a few
//! tiers: at most 64 times the record's bytes (a decoded value legitimately takes more memory
//! than its encoding: an empty string is one byte on disk and 24 in memory).

use bincode::config::standard;
use bincode::Decode;

/// The largest record decoded; larger ones are refused (a memory's text is capped far below).
pub(crate) const MAX_RECORD: usize = 1 << 26;

/// Decodes a `T` from the front of `bytes`, returning it and the bytes used.
pub(crate) fn decode_bounded<T: Decode<()>>(bytes: &[u8]) -> Result<(T, usize), String> {
    macro_rules! tiers {
        ($($max:expr => $limit:expr),* $(,)?) => {
            $(
                if bytes.len() <= $max {
                    return bincode::decode_from_slice(bytes, standard().with_limit::<{ $limit }>())
                        .map_err(|e| e.to_string());
                }
            )*
        };
    }
    tiers!(
        1 << 10 => 1 << 16,
        1 << 14 => 1 << 20,
        1 << 18 => 1 << 24,
        1 << 22 => 1 << 28,
        // 2^32 (a 32-bit target, WebAssembly's, cannot hold more anyway).
        MAX_RECORD => MAX_RECORD.saturating_mul(64),
    );
    Err(format!(
        "record of {} bytes is larger than the {MAX_RECORD}-byte limit",
        bytes.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_claimed_length_is_an_error_not_an_allocation() {
        // A string claiming 2^62 bytes (varint marker 253 = u64 follows), then 2^64 - 1.
        for len in [1u64 << 62, u64::MAX] {
            let mut bytes = vec![253u8];
            bytes.extend_from_slice(&len.to_le_bytes());
            bytes.extend_from_slice(b"abc");
            let r = decode_bounded::<String>(&bytes);
            assert!(r.is_err(), "{len}: {r:?}");
            let r = decode_bounded::<Vec<String>>(&bytes);
            assert!(r.is_err(), "{len}: {r:?}");
        }
    }

    #[test]
    fn legitimate_values_decode_in_every_tier() {
        for n in [0usize, 10, 5_000, 100_000, 2_000_000] {
            let s = "x".repeat(n);
            let bytes = bincode::encode_to_vec(&s, standard()).unwrap();
            let (back, used): (String, usize) = decode_bounded(&bytes).unwrap();
            assert_eq!((back, used), (s, bytes.len()));
        }
        // Many empty strings: far more memory than encoded bytes, still within the limit.
        let v = vec![String::new(); 900];
        let bytes = bincode::encode_to_vec(&v, standard()).unwrap();
        assert_eq!(decode_bounded::<Vec<String>>(&bytes).unwrap().0, v);
    }
}
