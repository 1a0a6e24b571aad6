//! Sync (docs/sync.md): one memory on every device of its user, through object storage that
//! sees only sealed, signed segments. The merge rules, pure, are `crate::merge` (the memory
//! handle stamps and erases by them too); the rows
//! ([`payload`]) and segments ([`segment`]) a remote holds; the remote itself ([`remote`]);
//! what a store remembers of its syncs ([`state`]); the key directory ([`keys`]); and a sync:
//! keys, push ([`push`]), then pull ([`pull`]).

mod compact;
mod keys;
mod payload;
mod pull;
mod push;
pub(crate) mod remote;
mod segment;
mod state;

use crate::error::Result;
use crate::invalid::InvalidInput;
use crate::memory::views::Transfer;
use crate::memory::Memory;
use crate::vocabulary::{SyncRequest, Synced};

impl Memory {}

impl<'a> Transfer<'a> {
    /// Pushes this device's changes since its last push to the remote `r` names (an
    /// S3-compatible bucket, or a shared folder) as sealed, signed segments, then pulls the
    /// other devices' and merges them by the rules of docs/sync.md. Either step may be
    /// killed: the next sync repeats what did not finish, and nothing is applied twice.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a store that is not encrypted or a remote memloop
    /// cannot use; [`crate::Error::Io`] when the remote fails or stalls (the next sync
    /// completes this one); [`crate::Error::Corrupt`] for a signed segment holding a row no
    /// device writes.
    pub fn sync(&self, req: &SyncRequest) -> Result<Synced> {
        req.check()?;
        let Some(sealer) = self.memory.store().sealing.0.clone() else {
            return Err(InvalidInput::Options(
                "sync needs an encrypted store (open it with a key file): the remote must hold nothing in the clear; export this store and import it into an encrypted one".into(),
            )
            .into());
        };
        let remote = remote::Remote::open(&remote::RemoteSpec {
            url: req.remote.clone(),
            endpoint: req.endpoint.clone(),
            timeout: req.timeout(),
        })?;
        let mut st = state::SyncState::load(self.memory, &remote)?;
        // The keys the other devices made since first; this device's own published after the
        // pull (an erasure it carried out destroys its user's key first, and replaces the
        // sync key before the sync returns). A device that reads this push's rows before its
        // keys waits for them (`Synced::waiting`).
        let taken = self.memory.take_keys(&remote, &sealer)?;
        let pushed = self.memory.push(&remote, &sealer, &mut st)?;
        let mut out = Synced {
            device: state::hex(st.device),
            pushed: pushed.rows,
            pushed_segments: pushed.segments,
            pushed_bytes: pushed.bytes,
            ..Synced::default()
        };
        self.memory.pull(&remote, &sealer, &mut st, &mut out)?;
        if out.erasures > 0 {
            // An erasure carried out here may have sealed memories made after it under a new
            // key of their user: they go now, not one sync later (the copies pushed before
            // can no longer be opened by the devices that carried the erasure out).
            let again = self.memory.push(&remote, &sealer, &mut st)?;
            out.pushed += again.rows;
            out.pushed_segments += again.segments;
            out.pushed_bytes += again.bytes;
        }
        self.memory.publish_keys(&remote, &sealer, &taken.gone)?;
        self.memory.write_head(&remote, &sealer, &st)?;
        if req.compact {
            let c = self.memory.compact_remote(&remote, &sealer, &st)?;
            out.deleted_segments = c.deleted;
            out.snapshot_bytes = c.snapshot_bytes;
        }
        Ok(out)
    }
}
