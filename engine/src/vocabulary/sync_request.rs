//! `sync` as every door asks for it: the remote, and what the sync did.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::invalid::InvalidInput;

/// `sync`: push this device's changes to a remote and pull the other devices'
/// (docs/sync.md). The store must be encrypted: the remote sees sealed, signed segments only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncRequest {
    /// `s3://bucket/prefix` (an S3-compatible bucket; credentials from the usual
    /// environment: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`) or
    /// `file:///path` (a shared folder).
    pub remote: String,
    /// An S3-compatible endpoint other than AWS's (`http://127.0.0.1:9000`).
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Seconds one request to the remote may take, retries included (default 60, at most
    /// 3600): a remote that stalls fails the sync, and the next sync completes it.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// After the sync, compact the remote: write a snapshot of this store, then delete the
    /// segments every device has applied (docs/sync.md).
    #[serde(default)]
    pub compact: bool,
}

impl SyncRequest {
    /// A sync with `remote`.
    pub fn to(remote: impl Into<String>) -> SyncRequest {
        SyncRequest {
            remote: remote.into(),
            endpoint: None,
            timeout_secs: None,
            compact: false,
        }
    }

    /// Checks the request.
    ///
    /// # Errors
    /// [`InvalidInput::Field`] for an empty remote or endpoint.
    pub fn check(&self) -> Result<(), InvalidInput> {
        if self.remote.trim().is_empty() {
            return Err(InvalidInput::Field {
                field: "remote",
                reason: "give s3://bucket/prefix or file:///path".into(),
            });
        }
        if self
            .endpoint
            .as_deref()
            .is_some_and(|e| e.trim().is_empty())
        {
            return Err(InvalidInput::Field {
                field: "endpoint",
                reason: "empty".into(),
            });
        }
        if self
            .timeout_secs
            .is_some_and(|t| t == 0 || t > MAX_TIMEOUT_SECS)
        {
            return Err(InvalidInput::Field {
                field: "timeout_secs",
                reason: format!("from 1 to {MAX_TIMEOUT_SECS}"),
            });
        }
        Ok(())
    }

    /// The timeout of one request to the remote.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }
}

/// Seconds one request to a remote may take when the request does not say.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
const MAX_TIMEOUT_SECS: u64 = 3600;

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Synced {
    /// This store's device id (hex), made at its first sync.
    pub device: String,
    /// Rows pushed: memory versions, forgotten versions, erasures.
    pub pushed: usize,
    /// Segments written.
    pub pushed_segments: usize,
    /// Bytes written.
    pub pushed_bytes: u64,
    /// Rows pulled from the other devices and applied.
    pub pulled: usize,
    /// Segments read.
    pub pulled_segments: usize,
    /// Bytes read.
    pub pulled_bytes: u64,
    /// Rows pulled that this device cannot read: sealed under an erased user's key, or under
    /// a key made on another device after this ring was exported (docs/sync.md).
    pub unreadable: usize,
    /// Erasures another device made, carried out here (each with its receipt in this store).
    pub erasures: usize,
    /// Objects not believed, by name: damaged, signed by a device without this ring, longer
    /// than a segment may be, or a signed object under a name its header does not give (a
    /// replay). Nothing of that device after one is applied until it verifies: each sync
    /// reports it again.
    pub refused: Vec<String>,
    /// Segments holding a row sealed under a key this key file does not hold yet (the key
    /// directory not read up to it): neither they nor their device's later segments are
    /// applied yet; a later sync applies them once the key arrives.
    pub waiting: Vec<String>,
    /// Segments a later segment of their device names as recorded before it, which the
    /// remote did not serve (withheld, or rolled back), by device and number: that device's
    /// later segments wait until they are served.
    pub missing: Vec<String>,
    /// Pulled memories embedded again because their device used another model.
    pub reembedded: usize,
    /// With `compact`: segments deleted from the remote.
    pub deleted_segments: usize,
    /// With `compact`: the bytes of the snapshot written.
    pub snapshot_bytes: u64,
}
