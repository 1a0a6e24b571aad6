//! What identifies one version of an index file without reading it: length, modification and
//! change times, inode and device. Any write to a file sets its change time to the present,
//! which no user-space call can set back, so a file showing the stamp it had when its content
//! was known good has that content still (on filesystems whose change times are finer than the
//! time between two writes: nanoseconds on Linux 6.13+ for ext4, xfs, btrfs and tmpfs).

use std::fs::Metadata;

/// The identity of an index file's version; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileStamp {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
    dev: u64,
}

/// Bytes of [`FileStamp::to_bytes`].
pub const FILE_STAMP_LEN: usize = 56;

impl FileStamp {
    /// The stamp of a file from its metadata (`None` off Unix: no change time to trust).
    pub(crate) fn of(meta: &Metadata) -> Option<FileStamp> {
        let id = crate::platform::file_identity(meta)?;
        Some(FileStamp {
            len: meta.len(),
            mtime_ns: id.mtime_ns,
            ctime_ns: id.ctime_ns,
            ino: id.ino,
            dev: id.dev,
        })
    }

    /// The stamp as bytes (little-endian fields in declaration order).
    pub fn to_bytes(&self) -> [u8; FILE_STAMP_LEN] {
        let mut out = [0u8; FILE_STAMP_LEN];
        out[..8].copy_from_slice(&self.len.to_le_bytes());
        out[8..24].copy_from_slice(&self.mtime_ns.to_le_bytes());
        out[24..40].copy_from_slice(&self.ctime_ns.to_le_bytes());
        out[40..48].copy_from_slice(&self.ino.to_le_bytes());
        out[48..].copy_from_slice(&self.dev.to_le_bytes());
        out
    }

    /// A stamp from [`FileStamp::to_bytes`]; `None` for any other length.
    pub fn from_bytes(bytes: &[u8]) -> Option<FileStamp> {
        let b: &[u8; FILE_STAMP_LEN] = bytes.try_into().ok()?;
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let i128_at = |i: usize| i128::from_le_bytes(b[i..i + 16].try_into().unwrap_or([0; 16]));
        Some(FileStamp {
            len: u64_at(0),
            mtime_ns: i128_at(8),
            ctime_ns: i128_at(24),
            ino: u64_at(40),
            dev: u64_at(48),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_round_trip_and_change_with_a_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"one").unwrap();
        let Some(a) = FileStamp::of(&std::fs::metadata(&path).unwrap()) else {
            return; // no stamps on this platform
        };
        assert_eq!(FileStamp::from_bytes(&a.to_bytes()), Some(a));
        assert_eq!(FileStamp::from_bytes(&a.to_bytes()[1..]), None);
        std::fs::write(&path, b"two").unwrap();
        let b = FileStamp::of(&std::fs::metadata(&path).unwrap()).unwrap();
        assert_ne!(a, b, "a rewrite of the same length must change the stamp");
    }
}
