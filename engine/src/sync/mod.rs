//! Sync (docs/sync.md): one memory on every device of its user, through object storage that
//! sees only sealed, signed segments. This part holds the merge rules, pure
//! ([`merge`]): what the devices' changes become once they meet, in any order.

// The rules land first, property-tested on their own; the segments, the remote and the
// `sync` operation that feed them from a store come next (issue 63).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod merge;
