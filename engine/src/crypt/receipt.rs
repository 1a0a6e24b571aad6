//! Erasure receipts: what an erasure removed, signed with the store's Ed25519 key and chained
//! to the receipt before it.
//!
//! A receipt is one line of compact JSON (fields in the order below) and a newline. The
//! signature covers the same JSON with `signature` empty; [`verify_receipt`] also requires the
//! file to be exactly that serialisation, so no byte of it can change and still verify.

use std::collections::BTreeMap;

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

/// Proof that a scope was erased: signed by the store, chained to its earlier receipts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErasureReceipt {
    /// `memloop-erasure-receipt`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// The store's id (hex), as in its index file.
    pub store: String,
    /// The user erased, if the erasure named one.
    pub user: Option<String>,
    /// The agent erased, if named.
    pub agent: Option<String>,
    /// The session erased, if named.
    pub session: Option<String>,
    /// When, ms since the Unix epoch.
    pub at: i64,
    /// Rows removed per table (`items`, `vectors`, `catalog`, `hashes`, `forget_log`, …).
    pub counts: BTreeMap<String, u64>,
    /// Whether the store is encrypted (then its key is destroyed; otherwise the bytes were
    /// overwritten by rewriting the files).
    pub encrypted: bool,
    /// The id (hex) of the data key destroyed: records sealed under it are unreadable
    /// wherever they survive. `None` for an unencrypted store, or a scope without its own key.
    pub destroyed_key: Option<String>,
    /// The change-log sequence numbers of the deletions, first and last (equal when none).
    pub changes: [u64; 2],
    /// The sha256 (hex) of the store's previous receipt, or 64 zeros for its first.
    pub previous: String,
    /// The store's Ed25519 public key (hex).
    pub public_key: String,
    /// The Ed25519 signature (hex) of this receipt with `signature` empty.
    pub signature: String,
}

/// Why a receipt does not verify.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// Not a receipt's JSON.
    #[error("not an erasure receipt: {0}")]
    NotAReceipt(String),
    /// The bytes are not the receipt's own serialisation (something in it was changed).
    #[error("the receipt's bytes were changed (it is not the serialisation that was signed)")]
    Altered,
    /// The signature does not match the public key and content.
    #[error("the signature does not verify")]
    BadSignature,
}

impl ErasureReceipt {
    /// The receipt's file: compact JSON and a newline.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("a receipt serialises");
        s.push('\n');
        s
    }

    fn signed_bytes(&self) -> Vec<u8> {
        let mut unsigned = self.clone();
        unsigned.signature = String::new();
        serde_json::to_vec(&unsigned).expect("a receipt serialises")
    }

    /// Signs with `seed`'s Ed25519 key (sets `public_key` and `signature`).
    pub(crate) fn sign(&mut self, seed: &[u8; 32]) {
        let key = SigningKey::from_bytes(seed);
        self.public_key = hex::encode(key.verifying_key().to_bytes());
        let sig = key.sign(&self.signed_bytes());
        self.signature = hex::encode(sig.to_bytes());
    }

    /// The sha256 (hex) of the receipt's file, which the next receipt names as `previous`.
    pub fn digest(&self) -> String {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(self.to_line().as_bytes()))
    }
}

/// Checks a receipt file: its JSON, that its bytes are exactly the serialisation that was
/// signed (one trailing newline allowed), and the signature under the public key it names.
/// Compare `public_key` with the store's own to know the store signed it.
///
/// # Errors
/// [`ReceiptError`].
pub fn verify_receipt(bytes: &[u8]) -> Result<ErasureReceipt, ReceiptError> {
    let receipt: ErasureReceipt =
        serde_json::from_slice(bytes).map_err(|e| ReceiptError::NotAReceipt(e.to_string()))?;
    if receipt.format != "memloop-erasure-receipt" || receipt.version != 1 {
        return Err(ReceiptError::NotAReceipt(
            "unknown format or version".into(),
        ));
    }
    let line = receipt.to_line();
    if bytes != line.as_bytes() && bytes != line.trim_end().as_bytes() {
        return Err(ReceiptError::Altered);
    }
    let mut key = [0u8; 32];
    let mut sig = [0u8; 64];
    hex::decode_to_slice(&receipt.public_key, &mut key).map_err(|_| ReceiptError::BadSignature)?;
    hex::decode_to_slice(&receipt.signature, &mut sig).map_err(|_| ReceiptError::BadSignature)?;
    // Hex is written lowercase: an uppercased digit of the signature (which the signature
    // cannot cover) is a changed byte too.
    if receipt.signature != hex::encode(sig) {
        return Err(ReceiptError::Altered);
    }
    let key = VerifyingKey::from_bytes(&key).map_err(|_| ReceiptError::BadSignature)?;
    key.verify(&receipt.signed_bytes(), &Signature::from_bytes(&sig))
        .map_err(|_| ReceiptError::BadSignature)?;
    Ok(receipt)
}

/// Why a receipt log does not verify as one chain.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// Receipt `index` (0-based) does not verify on its own.
    #[error("receipt {} of the log: {source}", index + 1)]
    Receipt {
        /// Its place in the log.
        index: usize,
        /// Why.
        source: ReceiptError,
    },
    /// Receipt `index` names another key than the first receipt.
    #[error("receipt {} of the log is signed by another key than the first", index + 1)]
    OtherSigner {
        /// Its place in the log.
        index: usize,
    },
    /// Receipt `index`'s `previous` is not the digest of the receipt before it (one was
    /// removed, changed or put in between), or the first does not start the chain.
    #[error("receipt {} of the log does not follow the one before it (a receipt was removed or changed)", index + 1)]
    Broken {
        /// Its place in the log.
        index: usize,
    },
}

/// Checks a whole receipt log, oldest first (as [`crate::Admin::receipt_log`] gives it):
/// every receipt verifies, all are signed by one key, the first starts the chain (64 zeros)
/// and each names the sha256 of the one before. Returns the receipts.
///
/// # Errors
/// [`ChainError`], naming the first receipt that fails.
pub fn verify_receipt_chain<S: AsRef<[u8]>>(
    lines: &[S],
) -> Result<Vec<ErasureReceipt>, ChainError> {
    let mut out: Vec<ErasureReceipt> = Vec::with_capacity(lines.len());
    let mut previous = "0".repeat(64);
    for (index, line) in lines.iter().enumerate() {
        let receipt = verify_receipt(line.as_ref())
            .map_err(|source| ChainError::Receipt { index, source })?;
        if out
            .first()
            .is_some_and(|f| f.public_key != receipt.public_key)
        {
            return Err(ChainError::OtherSigner { index });
        }
        if receipt.previous != previous {
            return Err(ChainError::Broken { index });
        }
        previous = receipt.digest();
        out.push(receipt);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_changed_byte_fails() {
        let mut r = ErasureReceipt {
            format: "memloop-erasure-receipt".into(),
            version: 1,
            store: "00".into(),
            user: Some("ana".into()),
            agent: None,
            session: None,
            at: 5,
            counts: BTreeMap::from([("items".into(), 3)]),
            encrypted: true,
            destroyed_key: Some("0102030405060708".into()),
            changes: [1, 3],
            previous: "0".repeat(64),
            public_key: String::new(),
            signature: String::new(),
        };
        r.sign(&[7; 32]);
        let line = r.to_line().into_bytes();
        assert_eq!(verify_receipt(&line).unwrap(), r);
        for i in 0..line.len() {
            for flip in [1u8, 0x20] {
                let mut bad = line.clone();
                bad[i] ^= flip;
                assert!(verify_receipt(&bad).is_err(), "byte {i} ^ {flip}");
            }
        }
    }

    #[test]
    fn a_chain_verifies_and_a_removed_or_foreign_receipt_breaks_it() {
        let make = |previous: String, at: i64, seed: u8| {
            let mut r = ErasureReceipt {
                format: "memloop-erasure-receipt".into(),
                version: 1,
                store: "00".into(),
                user: Some(format!("u{at}")),
                agent: None,
                session: None,
                at,
                counts: BTreeMap::new(),
                encrypted: false,
                destroyed_key: None,
                changes: [0, 0],
                previous,
                public_key: String::new(),
                signature: String::new(),
            };
            r.sign(&[seed; 32]);
            r
        };
        let a = make("0".repeat(64), 1, 7);
        let b = make(a.digest(), 2, 7);
        let c = make(b.digest(), 3, 7);
        let lines = [a.to_line(), b.to_line(), c.to_line()];
        assert_eq!(verify_receipt_chain(&lines).unwrap().len(), 3);
        assert!(verify_receipt_chain::<String>(&[]).unwrap().is_empty());
        // The middle one removed; the first removed; a receipt of another key in the chain.
        let gap = [a.to_line(), c.to_line()];
        assert!(matches!(
            verify_receipt_chain(&gap),
            Err(ChainError::Broken { index: 1 })
        ));
        let headless = [b.to_line(), c.to_line()];
        assert!(matches!(
            verify_receipt_chain(&headless),
            Err(ChainError::Broken { index: 0 })
        ));
        let foreign = make(a.digest(), 2, 9);
        let mixed = [a.to_line(), foreign.to_line()];
        assert!(matches!(
            verify_receipt_chain(&mixed),
            Err(ChainError::OtherSigner { index: 1 })
        ));
        let mut bad = b.to_line();
        bad = bad.replace("\"at\":2", "\"at\":4");
        let altered = [a.to_line(), bad];
        assert!(matches!(
            verify_receipt_chain(&altered),
            Err(ChainError::Receipt { index: 1, .. })
        ));
    }
}
