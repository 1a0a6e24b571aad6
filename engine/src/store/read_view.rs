//! A read-only view of the database file that needs no disk space: after a failed commit on a
//! full disk, redb cannot reopen the file (its recovery writes), so reads would fail until a
//! person frees space and restarts the process. This backend lets redb recover in memory:
//! it reads the file and keeps every write redb makes in memory, never touching the file, so
//! the last committed state can be read while the disk stays full.

use std::fs::File;
use std::io;
use std::path::Path;

use parking_lot::Mutex;
use redb::StorageBackend;

/// The file underneath, and what redb wrote over it (kept in memory, in order).
#[derive(Debug)]
pub(crate) struct ReadView {
    file: File,
    state: Mutex<Overlay>,
}

#[derive(Debug)]
struct Overlay {
    len: u64,
    /// The file's bytes from here on read as zeros (redb cut the length below them once).
    zero_from: u64,
    /// Writes in the order made: a later one wins where they overlap.
    writes: Vec<(u64, Vec<u8>)>,
}

impl ReadView {
    /// A view of the database file at `path`, opened read-only (no lock: the store's own
    /// `LOCK` keeps other processes out, and this view never writes).
    pub(crate) fn open(path: &Path) -> io::Result<ReadView> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(ReadView {
            file,
            state: Mutex::new(Overlay {
                len,
                zero_from: len,
                writes: Vec::new(),
            }),
        })
    }
}

impl StorageBackend for ReadView {
    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().len)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let state = self.state.lock();
        let end = offset
            .checked_add(out.len() as u64)
            .filter(|&end| end <= state.len)
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        // From the file where it has the bytes, zeros past its end (a length redb set).
        let on_disk = self.file.metadata()?.len().min(state.zero_from);
        let from_file = on_disk.saturating_sub(offset).min(out.len() as u64) as usize;
        crate::platform::read_exact_at(&self.file, &mut out[..from_file], offset)?;
        out[from_file..].fill(0);
        for (at, data) in &state.writes {
            let (w_start, w_end) = (*at, at + data.len() as u64);
            let (start, stop) = (w_start.max(offset), w_end.min(end));
            if start < stop {
                let dst = (start - offset) as usize..(stop - offset) as usize;
                let src = (start - w_start) as usize..(stop - w_start) as usize;
                out[dst].copy_from_slice(&data[src]);
            }
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        if len < state.len {
            // Bytes cut off read as zeros if the length grows again.
            state.zero_from = state.zero_from.min(len);
            for (at, data) in &mut state.writes {
                data.truncate(len.saturating_sub(*at) as usize);
            }
        }
        state.len = len;
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.state.lock().writes.push((offset, data.to_vec()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_stay_in_memory_and_win_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let v = ReadView::open(&path).unwrap();
        v.write(2, b"ab").unwrap();
        v.write(3, b"XYZ").unwrap();
        let mut out = [0u8; 10];
        v.read(0, &mut out).unwrap();
        assert_eq!(&out, b"01aXYZ6789");
        v.set_len(12).unwrap();
        let mut tail = [9u8; 4];
        v.read(8, &mut tail).unwrap();
        assert_eq!(&tail, b"89\0\0");
        assert!(v.read(10, &mut [0u8; 3]).is_err());
        v.set_len(4).unwrap();
        v.set_len(8).unwrap();
        let mut all = [9u8; 8];
        v.read(0, &mut all).unwrap();
        assert_eq!(&all, b"01aX\0\0\0\0");
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789");
    }
}
