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
use crate::memory::Memory;
use crate::vocabulary::{SyncRequest, Synced};

impl Memory {
    /// Pushes this device's changes since its last push to `req.remote`, then pulls and
    /// applies the other devices' (docs/sync.md). Either step may be killed: the next sync
    /// repeats what did not finish, and applying a change twice changes nothing.
    ///
    /// # Errors
    /// [`InvalidInput::Options`] for a store that is not encrypted (a remote sees sealed rows
    /// only) or a remote URL memloop cannot use; [`crate::Error::Io`] when the remote fails or
    /// stalls; [`crate::Error::Corrupt`] for a segment that verifies but holds a row no device
    /// writes.
    pub(crate) fn sync(&self, req: &SyncRequest) -> Result<Synced> {
        req.check()?;
        let Some(sealer) = self.store().sealing.0.clone() else {
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
        let mut st = state::SyncState::load(self, &remote)?;
        // The keys the other devices made since first; this device's own published after the
        // pull (an erasure it carried out destroys its user's key first, and replaces the
        // sync key before the sync returns). A device that reads this push's rows before its
        // keys waits for them (`Synced::waiting`).
        let taken = self.take_keys(&remote, &sealer)?;
        let pushed = self.push(&remote, &sealer, &mut st)?;
        let mut out = Synced {
            device: state::hex(st.device),
            pushed: pushed.rows,
            pushed_segments: pushed.segments,
            pushed_bytes: pushed.bytes,
            ..Synced::default()
        };
        self.pull(&remote, &sealer, &mut st, &mut out)?;
        if out.erasures > 0 {
            // An erasure carried out here may have sealed memories made after it under a new
            // key of their user: they go now, not one sync later (the copies pushed before
            // can no longer be opened by the devices that carried the erasure out).
            let again = self.push(&remote, &sealer, &mut st)?;
            out.pushed += again.rows;
            out.pushed_segments += again.segments;
            out.pushed_bytes += again.bytes;
        }
        self.publish_keys(&remote, &sealer, &taken.gone)?;
        self.write_head(&remote, &sealer, &st)?;
        if req.compact {
            let c = self.compact_remote(&remote, &sealer, &st)?;
            out.deleted_segments = c.deleted;
            out.snapshot_bytes = c.snapshot_bytes;
        }
        Ok(out)
    }
}
