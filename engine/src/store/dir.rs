//! The store directory's own safety: created private (0700 and files 0600 on Unix, an ACL for
//! this user alone on Windows: `crate::platform`), refused when another user could replace its
//! files (as ssh's StrictModes refuses a loose home directory), and its files opened without
//! following a symlink someone planted.

use std::path::Path;

use crate::error::{Error, Result};
use crate::invalid::InvalidInput;
pub(crate) use crate::platform::{create_own_file, open_own_file};

/// Creates `dir` (and missing parents) private to this user: only the last component is made
/// private (0700, or an ACL for this user alone), parents get the process's defaults.
pub(crate) fn create_private(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(parent, "create store directory", e))?;
    }
    match crate::platform::create_private_dir(dir) {
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
    let problem = crate::platform::unsafe_directory(dir, &meta)
        .map_err(|e| Error::io(dir, "read who may change the store directory", e))?;
    match problem {
        Some(why) => Err(InvalidInput::UnsafeDirectory {
            path: dir.to_path_buf(),
            why,
        }
        .into()),
        None => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
