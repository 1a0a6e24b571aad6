//! The storage fault seam: every file operation the store makes that changes a file (redb's
//! writes, length changes and fsyncs through [`FaultyBackend`], and the engine's own file
//! saves: index, manifest, export, database rewrite) is counted here, and a test can make any
//! one of them fail with ENOSPC, EIO, a short write or a failed fsync, as redb tests its own
//! crash consistency with a fault-injecting backend.
//!
//! Without [`crate::Options::storage_faults`] none of this is on the path: the database uses
//! redb's own file backend.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use redb::backends::FileBackend;
use redb::StorageBackend;

/// The failure to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The operation fails with ENOSPC (a full disk); nothing of it is written.
    NoSpace,
    /// The operation fails with EIO.
    Io,
    /// A write stores its first half, then fails with ENOSPC; other operations fail with
    /// ENOSPC.
    ShortWrite,
    /// An fsync fails with EIO without syncing; other operations fail with EIO.
    FailedSync,
}

/// Counts the store's file operations and fails the one chosen by [`StorageFaults::fail_at`].
/// Share one between a test and [`crate::Options::storage_faults`].
#[derive(Debug, Default)]
pub struct StorageFaults {
    ops: AtomicU64,
    plan: Mutex<Option<(u64, Fault)>>,
    /// Fail every operation from the planned one on (a disk that stays full).
    lasting: AtomicBool,
    fired: AtomicBool,
}

impl StorageFaults {
    /// A seam that counts and fails nothing until armed.
    pub fn new() -> Arc<StorageFaults> {
        Arc::new(StorageFaults::default())
    }

    /// Makes operation number `op` (counting from 1, from now on) fail with `fault`; the
    /// operations after it succeed again (a disk that had a moment's trouble).
    pub fn fail_at(&self, op: u64, fault: Fault) {
        self.arm(op, fault, false);
    }

    /// Makes operation number `op` and every one after it fail with `fault`: a disk that is
    /// full and stays full.
    pub fn fail_from(&self, op: u64, fault: Fault) {
        self.arm(op, fault, true);
    }

    fn arm(&self, op: u64, fault: Fault, lasting: bool) {
        self.ops.store(0, Ordering::SeqCst);
        self.fired.store(false, Ordering::SeqCst);
        self.lasting.store(lasting, Ordering::SeqCst);
        *self.plan.lock() = Some((op, fault));
    }

    /// Stops failing; counting goes on.
    pub fn disarm(&self) {
        *self.plan.lock() = None;
    }

    /// Operations counted since the last [`StorageFaults::fail_at`].
    pub fn operations(&self) -> u64 {
        self.ops.load(Ordering::SeqCst)
    }

    /// True once the planned fault was injected.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// Counts one operation; returns the fault to inject into it, if it is the one.
    pub(crate) fn next(&self) -> Option<Fault> {
        let n = self.ops.fetch_add(1, Ordering::SeqCst) + 1;
        let plan = *self.plan.lock();
        let lasting = self.lasting.load(Ordering::SeqCst);
        match plan {
            Some((at, fault)) if at == n || (lasting && n > at) => {
                self.fired.store(true, Ordering::SeqCst);
                Some(fault)
            }
            _ => None,
        }
    }

    /// Counts one operation that has no partial effect: the injected fault, if any, as an
    /// error.
    pub(crate) fn check(&self) -> io::Result<()> {
        match self.next() {
            Some(fault) => Err(error(fault)),
            None => Ok(()),
        }
    }
}

/// Counts one of the engine's own file operations (`op` on `path`) through the seam, when
/// there is one.
pub(crate) fn file_op(
    faults: Option<&Arc<StorageFaults>>,
    path: &std::path::Path,
    op: &'static str,
) -> crate::error::Result<()> {
    match faults {
        Some(f) => f.check().map_err(|e| crate::error::Error::io(path, op, e)),
        None => Ok(()),
    }
}

/// The error a fault shows as.
fn error(fault: Fault) -> io::Error {
    match fault {
        Fault::NoSpace | Fault::ShortWrite => {
            io::Error::from_raw_os_error(28) // ENOSPC
        }
        Fault::Io | Fault::FailedSync => io::Error::from_raw_os_error(5), // EIO
    }
}

/// redb's file backend with every write, length change and fsync going through the seam.
#[derive(Debug)]
pub(crate) struct FaultyBackend {
    file: FileBackend,
    faults: Arc<StorageFaults>,
}

impl FaultyBackend {
    pub(crate) fn new(file: FileBackend, faults: Arc<StorageFaults>) -> Self {
        FaultyBackend { file, faults }
    }
}

impl StorageBackend for FaultyBackend {
    fn len(&self) -> io::Result<u64> {
        self.file.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.file.read(offset, out)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.faults.check()?;
        self.file.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.faults.check()?;
        self.file.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        match self.faults.next() {
            None => self.file.write(offset, data),
            Some(Fault::ShortWrite) => {
                self.file.write(offset, &data[..data.len() / 2])?;
                Err(error(Fault::ShortWrite))
            }
            Some(fault) => Err(error(fault)),
        }
    }

    fn close(&self) -> io::Result<()> {
        self.file.close()
    }
}
