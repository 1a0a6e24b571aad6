//! A segment: one push of one device's changes, as the remote holds it. Nothing in it is
//! plaintext but its framing: each row's payload (memory text, tags, metadata values, vector,
//! ids and clock readings) is sealed under its scope's data key by the caller, and the whole
//! object is signed with the store's Ed25519 key, checked before any byte of it is believed.
//!
//! Layout: `MLSYNC01`, the signature (64 bytes) over everything after it, the header's length
//! (u32 LE) and the header (JSON: [`Header`]), then an Arrow IPC stream of two columns: `kind`
//! (u8: [`RowKind`]) and `sealed` (binary).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, RecordBatch, UInt8Array};
use arrow_schema::{DataType, Field, Schema};
use ed25519_dalek::{Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The first bytes of every segment.
const MAGIC: &[u8; 8] = b"MLSYNC01";

/// The most bytes one segment may hold (a push writes several past it); a remote's object
/// longer than this is refused before it is read.
pub(crate) const MAX_SEGMENT: usize = 64 << 20;

/// Bytes a push puts in one segment before it starts the next.
pub(crate) const SEGMENT_TARGET: usize = 16 << 20;

/// The longest header read.
const MAX_HEADER: usize = 1 << 20;

/// What a signed object is. A pull applies only segments, a fresh device reads only
/// manifests and their parts: one kind never passes for another (a head copied in as a
/// segment is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    /// One push's rows (`segments/<device>/<number>-<part>.seg`).
    Segment,
    /// A device's head (`heads/<device>`).
    Head,
    /// A snapshot's part (`snapshots/<stamp>/<part>.snap`).
    Part,
    /// A snapshot's manifest (`snapshots/<stamp>/manifest`).
    Manifest,
}

/// What a segment says of itself (in the clear, and signed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Header {
    /// The device that wrote it (hex).
    pub(crate) device: String,
    /// For a segment: its number in its device's log, which its name carries (a pull refuses
    /// a segment whose name says another); a number is never used by two pushes of one
    /// device. For a head: the last local change pushed. For a manifest: its parts' count.
    pub(crate) through: u64,
    /// Its place among that push's segments.
    pub(crate) part: u32,
    /// What the object is; absent in objects written before it was signed (a pull reads such
    /// an object as a segment only when it covers nothing, as a head or manifest does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<Kind>,
    /// For a segment: the number and SHA-256 (hex) of the last segment of the push its device
    /// recorded before this one (none for its first, and in segments written before the
    /// chain): a device's recorded pushes form a chain, so a pull that is served a later one
    /// sees that an earlier one is withheld or rolled back instead of passing it for good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prev: Option<(u64, String)>,
    /// For a manifest: the SHA-256 (hex) of each of its parts' bytes, in order, so that no
    /// other signed object passes for one of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) parts: Vec<String>,
    /// The embedding model of its vectors (a store's fingerprint).
    pub(crate) model: String,
    /// Their dimension.
    pub(crate) dim: usize,
    /// For a head or a snapshot: how far each device's segments are applied in it (device
    /// hex → the last segment's file name).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) covers: BTreeMap<String, String>,
}

/// What a row carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum RowKind {
    /// A memory version (new, or its metadata newer).
    Version = 1,
    /// A version forgotten.
    Forgotten = 2,
    /// A scope erased.
    Erased = 3,
}

impl RowKind {
    fn of(b: u8) -> Option<RowKind> {
        match b {
            1 => Some(RowKind::Version),
            2 => Some(RowKind::Forgotten),
            3 => Some(RowKind::Erased),
            _ => None,
        }
    }
}

/// One row: what it carries, and its payload, sealed.
pub(crate) type Row = (RowKind, Vec<u8>);

/// Why a segment is not believed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SegmentError {
    /// Not a segment, cut short, or its signature fails: written by no device holding this
    /// ring, or damaged.
    #[error("{0}")]
    Bad(String),
}

fn bad(why: impl Into<String>) -> SegmentError {
    SegmentError::Bad(why.into())
}

/// `rows` cut into runs of at most [`SEGMENT_TARGET`] bytes (a row larger than that alone),
/// in order: a push's or a snapshot's parts.
pub(crate) fn parts(rows: &[Row]) -> Vec<&[Row]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let mut end = start + 1;
        let mut size = rows[start].1.len();
        while end < rows.len() && size + rows[end].1.len() <= SEGMENT_TARGET {
            size += rows[end].1.len();
            end += 1;
        }
        out.push(&rows[start..end]);
        start = end;
    }
    out
}

/// The segment of `rows` (kind, sealed payload) under `header`, signed with `seed`.
pub(crate) fn encode(header: &Header, rows: &[Row], seed: &[u8; 32]) -> Vec<u8> {
    let schema = Arc::new(schema());
    let kinds = UInt8Array::from_iter_values(rows.iter().map(|(k, _)| *k as u8));
    let sealed = BinaryArray::from_iter_values(rows.iter().map(|(_, s)| s.as_slice()));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(kinds), Arc::new(sealed)])
        .expect("two columns of equal length match their schema");
    let mut body = Vec::new();
    {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut body, &schema)
            .expect("an IPC stream into memory cannot fail");
        w.write(&batch).expect("writing into memory cannot fail");
        w.finish().expect("writing into memory cannot fail");
    }
    let head = serde_json::to_vec(header).expect("a header serialises");
    let mut signed = Vec::with_capacity(4 + head.len() + body.len());
    signed.extend_from_slice(&(head.len() as u32).to_le_bytes());
    signed.extend_from_slice(&head);
    signed.extend_from_slice(&body);
    let signature = SigningKey::from_bytes(seed).sign(&[MAGIC.as_slice(), &signed].concat());
    [MAGIC.as_slice(), &signature.to_bytes(), &signed].concat()
}

/// The header and rows of `bytes`, once its signature holds for the key of `seed`.
///
/// # Errors
/// [`SegmentError::Bad`] for anything else: nothing of it is returned.
pub(crate) fn decode(bytes: &[u8], seed: &[u8; 32]) -> Result<(Header, Vec<Row>), SegmentError> {
    if bytes.len() > MAX_SEGMENT {
        return Err(bad("longer than a segment may be"));
    }
    let rest = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or_else(|| bad("not a memloop sync segment"))?;
    if rest.len() < 64 + 4 {
        return Err(bad("cut short"));
    }
    let (sig, signed) = rest.split_at(64);
    let sig = ed25519_dalek::Signature::from_bytes(sig.try_into().map_err(|_| bad("cut short"))?);
    let key: VerifyingKey = SigningKey::from_bytes(seed).verifying_key();
    key.verify(&[MAGIC.as_slice(), signed].concat(), &sig)
        .map_err(|_| {
            bad("its signature fails: written by a device without this key ring, or damaged")
        })?;
    let len = u32::from_le_bytes(signed[..4].try_into().map_err(|_| bad("cut short"))?) as usize;
    if len > MAX_HEADER || 4 + len > signed.len() {
        return Err(bad("header length past the segment"));
    }
    let header: Header =
        serde_json::from_slice(&signed[4..4 + len]).map_err(|e| bad(format!("header: {e}")))?;
    let body = &signed[4 + len..];
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(body), None)
        .map_err(|e| bad(format!("rows: {e}")))?;
    if reader.schema().as_ref() != &schema() {
        return Err(bad("rows of another shape"));
    }
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| bad(format!("rows: {e}")))?;
        let kinds = batch
            .column(0)
            .as_any()
            .downcast_ref::<UInt8Array>()
            .ok_or_else(|| bad("kind column"))?;
        let sealed = batch
            .column(1)
            .as_any()
            .downcast_ref::<BinaryArray>()
            .ok_or_else(|| bad("sealed column"))?;
        for i in 0..batch.num_rows() {
            if kinds.is_null(i) || sealed.is_null(i) {
                return Err(bad("a null row"));
            }
            let kind = RowKind::of(kinds.value(i)).ok_or_else(|| bad("a row of unknown kind"))?;
            rows.push((kind, sealed.value(i).to_vec()));
        }
    }
    Ok((header, rows))
}

/// The SHA-256 of `bytes`, in hex: how a manifest names its parts.
pub(crate) fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Header {
    /// Whether it says it is a `kind` object: its own kind, or for an object written before
    /// kinds were signed, a segment that covers nothing (a legacy head or manifest covers
    /// every device it applied).
    pub(crate) fn is(&self, kind: Kind) -> bool {
        match self.kind {
            Some(k) => k == kind,
            None => kind != Kind::Segment || self.covers.is_empty(),
        }
    }
}

fn schema() -> Schema {
    Schema::new(vec![
        Field::new("kind", DataType::UInt8, false),
        Field::new("sealed", DataType::Binary, false),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            device: "00000000000000ff".into(),
            through: 9,
            part: 0,
            kind: Some(Kind::Segment),
            prev: Some((8, "ab".into())),
            parts: Vec::new(),
            model: "m".into(),
            dim: 4,
            covers: BTreeMap::from([("ab".into(), "00000000000000000001-000000.seg".into())]),
        }
    }

    #[test]
    fn parts_keep_every_row_in_order_within_the_target() {
        let rows: Vec<Row> = [
            SEGMENT_TARGET / 2,
            SEGMENT_TARGET / 2,
            1,
            SEGMENT_TARGET * 2,
            3,
        ]
        .iter()
        .map(|&n| (RowKind::Version, vec![0u8; n]))
        .collect();
        let parts = parts(&rows);
        let sizes: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        assert_eq!(sizes, [2, 1, 1, 1]);
        assert_eq!(parts.concat(), rows);
        assert!(super::parts(&[]).is_empty());
    }

    #[test]
    fn a_segment_reads_back_and_any_changed_byte_is_refused() {
        let seed = [7u8; 32];
        let rows = vec![
            (RowKind::Version, vec![1, 2, 3]),
            (RowKind::Forgotten, vec![]),
            (RowKind::Erased, vec![9; 100]),
        ];
        let bytes = encode(&header(), &rows, &seed);
        let (h, back) = decode(&bytes, &seed).unwrap();
        assert_eq!(h, header());
        assert_eq!(back, rows);
        for i in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(decode(&b, &seed).is_err(), "byte {i} changed");
        }
        for cut in [0, 8, 72, 80, bytes.len() - 1] {
            assert!(decode(&bytes[..cut], &seed).is_err(), "cut at {cut}");
        }
        assert!(decode(&bytes, &[8u8; 32]).is_err(), "another ring's key");
    }
}
