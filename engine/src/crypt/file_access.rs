//! Who else may read a key file: the one platform difference of the key ring, kept here.
//!
//! On Unix, the permission bits: any bit for the group or others exposes it. Elsewhere a
//! file's access is decided by its ACL, which this module does not read yet (docs/limits.md):
//! nothing is refused there.

/// The file's permission bits when users other than its owner may read or write it.
#[cfg(unix)]
pub(crate) fn exposed(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

/// The file's permission bits when users other than its owner may read or write it.
#[cfg(not(unix))]
pub(crate) fn exposed(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}
