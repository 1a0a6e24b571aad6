//! The process lock: one writer per store directory.
//!
//! An exclusive advisory lock (`flock`) on `LOCK`, holding the owner's pid. The kernel drops it
//! when the process dies, `kill -9` included, so a crash never leaves a stale lock behind.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::error::{Error, Result};

/// How long an open waits for a lock this same process seems to hold (see `acquire`).
const SELF_HELD_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Held for as long as the store is open.
#[derive(Debug)]
pub(crate) struct ProcessLock {
    _file: File,
}

impl ProcessLock {
    /// Takes the lock of store `dir`, or fails with the holder's pid: at once when another
    /// process holds it, after at most half a second when this one seems to.
    pub(crate) fn acquire(dir: &Path) -> Result<ProcessLock> {
        let path = dir.join("LOCK");
        // Never through a symlink: one planted there would have the owner truncate its target.
        let mut file = super::dir::open_own_file(&path)
            .map_err(|e| Error::io(&path, "open lock file (a symlink is refused)", e))?;
        let started = std::time::Instant::now();
        loop {
            match crate::platform::try_lock(&file) {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    let mut s = String::new();
                    let _ = file.rewind().and_then(|()| file.read_to_string(&mut s));
                    let pid = s.trim().parse().ok().filter(|&pid| pid != 0);
                    // A store this process just closed can look held for a moment: a child
                    // another thread is spawning shares the closed handle's lock until it
                    // execs. Only then is a short wait worth it; other holders fail at once.
                    if pid == Some(crate::platform::process_id())
                        && started.elapsed() < SELF_HELD_WAIT
                    {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        continue;
                    }
                    return Err(Error::Locked {
                        path: dir.to_path_buf(),
                        pid,
                    });
                }
                Err(TryLockError::Error(e)) => return Err(Error::io(&path, "lock", e)),
            }
        }
        // The pid only names the holder in other processes' errors: on a full disk the lock
        // is held all the same, and they are told the holder is still opening it.
        let _ = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| write!(file, "{}", crate::platform::process_id()))
            .and_then(|()| file.flush());
        Ok(ProcessLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two processes starting together: the first holds the lock but has not written its pid
    /// yet. The second is told so, not "locked by process 0".
    #[test]
    fn a_holder_without_a_pid_yet_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let holder = File::create(dir.path().join("LOCK")).unwrap();
        holder.try_lock().unwrap();
        let err = ProcessLock::acquire(dir.path()).unwrap_err();
        assert!(matches!(err, Error::Locked { pid: None, .. }), "{err}");
        assert!(err.to_string().contains("still opening"), "{err}");
        assert!(!err.to_string().contains("process 0"), "{err}");
    }
}
