//! `sync`: push this device's changes to a remote and pull the other devices'.

use crate::error::Result;
use crate::memory::Memory;
use crate::vocabulary::{Door, SyncRequest, Synced};

use super::operate::{Operate, REMOTES_OF_THE_OWNER};

/// [`super::Operation::Sync`].
pub(super) struct Sync;

impl Operate for Sync {
    const NAME: &'static str = "sync";
    const DOC: &'static str = "Push this device's changes to a remote (an S3-compatible bucket \
        or a shared folder) as sealed, signed segments, and pull and merge the other devices'. \
        The store must be encrypted; the remote holds nothing in the clear.";
    const SCOPED: bool = false;
    const READS_ONLY: bool = false;
    type Request = SyncRequest;
    type Answer = Synced;

    fn absent_from(door: Door) -> Option<&'static str> {
        matches!(door, Door::Mcp | Door::Inspector).then_some(REMOTES_OF_THE_OWNER)
    }

    fn run(memory: &Memory, request: SyncRequest) -> Result<Synced> {
        memory.transfer().sync(&request)
    }

    fn text(_: &SyncRequest, synced: &Synced) -> String {
        // The answer's JSON as it is: its fields are what a model needs.
        serde_json::to_string(synced).unwrap_or_default()
    }
}
