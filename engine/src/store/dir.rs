//! The store directory's own safety: created private (0700, files 0600), refused when another
//! user could replace its files (as ssh's StrictModes refuses a loose home directory), and
//! its files opened without following a symlink someone planted.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::error::{Error, Result};
use crate::invalid::InvalidInput;

/// `O_NOFOLLOW`: opening a symlink fails (ELOOP) instead of opening its target.
const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;

/// Mode of a store directory this engine creates.
pub(crate) const DIR_MODE: u32 = 0o700;
/// Mode of every file this engine creates in it (and of exports, which hold the same text).
pub(crate) const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) private to this user: only the last component gets
/// [`DIR_MODE`], parents the process's defaults.
pub(crate) fn create_private(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(parent, "create store directory", e))?;
    }
    match std::fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            Err(Error::io(dir, "create store directory", e))
        }
        _ => Ok(()),
    }
}

/// Refuses a store directory that another user owns or that others can write: whoever can
/// write it can replace the database, plant a `LOCK` symlink or answer on its socket in the
/// owner's name. `allow` (Options::allow_unsafe_directory) overrides, explicitly.
pub(crate) fn check_safe(dir: &Path, allow: bool) -> Result<()> {
    if allow {
        return Ok(());
    }
    let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, "stat store directory", e))?;
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.permissions().mode() & 0o7777;
    let problem = if meta.uid() != me && meta.uid() != 0 {
        Some(format!("it belongs to user {} (you are {me})", meta.uid()))
    } else if mode & 0o022 != 0 {
        Some(format!(
            "other users can write it (mode {mode:04o}); `chmod go-w {}` fixes that",
            dir.display()
        ))
    } else {
        None
    };
    match problem {
        Some(why) => Err(InvalidInput::UnsafeDirectory {
            path: dir.to_path_buf(),
            why,
        }
        .into()),
        None => Ok(()),
    }
}

/// Opens (creating with [`FILE_MODE`]) a file of the store for reading and writing, refusing
/// to follow a symlink in its place.
pub(crate) fn open_own_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .custom_flags(NOFOLLOW)
        .open(path)
}

/// Creates `path` afresh (truncating it) with [`FILE_MODE`], not following a symlink.
pub(crate) fn create_own_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(FILE_MODE)
        .custom_flags(NOFOLLOW)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_private_and_loose_directories_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/store");
        create_private(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        check_safe(&dir, false).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = check_safe(&dir, false).unwrap_err().to_string();
        assert!(err.contains("other users can write it"), "{err}");
        check_safe(&dir, true).unwrap();
    }

    #[test]
    fn a_planted_symlink_is_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let precious = root.path().join("precious");
        std::fs::write(&precious, "precious content line").unwrap();
        let link = root.path().join("LOCK");
        std::os::unix::fs::symlink(&precious, &link).unwrap();
        assert!(open_own_file(&link).is_err());
        assert!(create_own_file(&link).is_err());
        assert_eq!(
            std::fs::read_to_string(&precious).unwrap(),
            "precious content line"
        );
    }
}
