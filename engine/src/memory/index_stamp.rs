//! The stamp of the index file this store saved last (`meta` key `index_stamp`): an open that
//! finds the file showing it searches at once, the full check following in the background.
//!
//! A stamp is the file's length, times, inode and device ([`FileStamp`]); any write to the
//! file sets a new change time, so a file with the recorded stamp holds what was saved. (On a
//! kernel whose change times are coarser than the time between the save and a write, that
//! write could keep the stamp; the background check still reads every byte and rebuilds a
//! damaged index, so such damage is searched for seconds at most, never saved.)

use memloop_index::FileStamp;

use crate::error::Result;
use crate::store::{Store, Tx};

const KEY: &str = "index_stamp";

/// The recorded stamp, if any (an unreadable one is none: the file is then verified first).
pub(crate) fn recorded(store: &Store) -> Option<FileStamp> {
    store
        .meta(KEY)
        .ok()
        .flatten()
        .and_then(|b| FileStamp::from_bytes(&b))
}

/// Records `stamp` as the saved index file's.
pub(crate) fn record(store: &Store, stamp: FileStamp) -> Result<()> {
    let mut tx = Tx::begin(store, true)?;
    tx.set_meta(KEY, &stamp.to_bytes())?;
    tx.commit()?;
    Ok(())
}
