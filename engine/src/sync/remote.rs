//! The remote a sync meets other devices in: an S3-compatible bucket (`s3://bucket/prefix`,
//! with the `s3` feature) or a shared folder (`file:///path`), both through the
//! `object_store` crate, driven by a small runtime of our own so that the engine's API stays
//! blocking.
//!
//! Layout under the prefix:
//! - `devices/<device>`: a device's registration, written create-if-absent (no two devices
//!   take the same id);
//! - `segments/<device>/<first>-<last>.seg`: a device's changes from its local sequence number
//!   `first` through `last` (sealed and signed: `segment.rs`).

use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use crate::error::{Error, Result};
use crate::invalid::InvalidInput;

/// The largest segment read back: a device writes at most [`super::segment::MAX_SEGMENT`].
const MAX_OBJECT: u64 = super::segment::MAX_SEGMENT as u64 + 4096;

/// Where to sync, as a door names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RemoteSpec {
    /// `s3://bucket/prefix` or `file:///path`.
    pub(crate) url: String,
    /// An S3-compatible endpoint (`http://127.0.0.1:9000`) instead of AWS's.
    pub(crate) endpoint: Option<String>,
    /// How long one request (its retries included) may take before the sync gives up: a
    /// bucket that stalls fails the sync, and the next one completes it.
    pub(crate) timeout: Duration,
}

/// An open remote.
pub(crate) struct Remote {
    store: Box<dyn ObjectStore>,
    prefix: ObjectPath,
    runtime: tokio::runtime::Runtime,
    timeout: Duration,
    /// A `file://` remote's folder: nothing below it that is a symbolic link is read or
    /// written (a link could lead a write out of the folder).
    folder: Option<std::path::PathBuf>,
    /// The URL, for errors and reports.
    pub(crate) url: String,
}

/// One object of the remote.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    /// Its name below the prefix (`segments/…`).
    pub(crate) name: String,
    /// Its size in bytes.
    pub(crate) size: u64,
}

impl Remote {
    /// Opens `spec` (nothing is read or written yet).
    ///
    /// # Errors
    /// [`InvalidInput::Options`] for a URL that is not `s3://` or `file://`, or `s3://`
    /// without the `s3` feature; [`Error::Io`] when the client cannot be made.
    pub(crate) fn open(spec: &RemoteSpec) -> Result<Remote> {
        let bad = |why: String| -> Error { InvalidInput::Options(why).into() };
        let url = url::Url::parse(&spec.url).map_err(|e| {
            bad(format!(
                "remote {:?}: {e} (give s3://bucket/prefix or file:///path)",
                spec.url
            ))
        })?;
        let mut folder = None;
        let (store, prefix): (Box<dyn ObjectStore>, ObjectPath) = match url.scheme() {
            "file" => {
                if spec.endpoint.is_some() {
                    return Err(bad("--endpoint is for s3:// remotes".into()));
                }
                let dir = url
                    .to_file_path()
                    .map_err(|()| bad(format!("remote {:?} is not a local path", spec.url)))?;
                std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, "create the remote folder", e))?;
                let local = crate::platform::folder_store(&dir)
                    .map_err(|e| remote_io(&spec.url, "open", e))?;
                folder = Some(dir);
                (local, ObjectPath::default())
            }
            "s3" => (s3(&url, spec)?, ObjectPath::from(url.path().trim_matches('/'))),
            other => {
                return Err(bad(format!(
                    "remote scheme {other}:// is not one memloop syncs with (give s3://bucket/prefix or file:///path)"
                )))
            }
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io(std::path::Path::new(&spec.url), "start the sync runtime", e))?;
        Ok(Remote {
            store,
            prefix,
            runtime,
            timeout: spec.timeout,
            folder,
            url: spec.url.clone(),
        })
    }

    /// The name of a symbolic link on the way to object `name` in a `file://` remote, if any.
    fn link_on_the_way(&self, name: &str) -> Option<String> {
        let mut at = self.folder.clone()?;
        for part in name.split('/') {
            at.push(part);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return Some(at.display().to_string());
            }
        }
        None
    }

    /// Refuses a write to `name` through a symbolic link of a `file://` remote.
    fn confined(&self, name: &str, op: &'static str) -> Result<()> {
        match self.link_on_the_way(name) {
            Some(link) => Err(Error::io(
                std::path::Path::new(&link),
                op,
                std::io::Error::other(
                    "a symbolic link inside a file:// remote: memloop writes only inside its folder",
                ),
            )),
            None => Ok(()),
        }
    }

    fn path(&self, name: &str) -> ObjectPath {
        name.split('/')
            .fold(self.prefix.clone(), |p, part| p.join(part))
    }

    fn run<T>(
        &self,
        op: &'static str,
        name: &str,
        f: impl std::future::Future<Output = object_store::Result<T>>,
    ) -> Result<T> {
        self.runtime.block_on(async {
            match tokio::time::timeout(self.timeout, f).await {
                Ok(r) => r.map_err(|e| remote_io(&format!("{}/{name}", self.url), op, e)),
                Err(_) => Err(Error::io(
                    std::path::Path::new(&format!("{}/{name}", self.url)),
                    op,
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the remote did not answer in time",
                    ),
                )),
            }
        })
    }

    /// Writes `bytes` as `name` if nothing is there yet: `Ok(false)` when something is.
    pub(crate) fn put_new(&self, name: &str, bytes: Vec<u8>) -> Result<bool> {
        self.confined(name, "write")?;
        let path = self.path(name);
        let opts = PutOptions::from(PutMode::Create);
        let put = self.store.put_opts(&path, PutPayload::from(bytes), opts);
        match self
            .runtime
            .block_on(async { tokio::time::timeout(self.timeout, put).await })
        {
            Ok(Ok(_)) => Ok(true),
            Ok(Err(object_store::Error::AlreadyExists { .. })) => Ok(false),
            Ok(Err(e)) => Err(remote_io(&format!("{}/{name}", self.url), "write", e)),
            Err(_) => Err(Error::io(
                std::path::Path::new(&self.url),
                "write",
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the remote did not answer in time",
                ),
            )),
        }
    }

    /// Writes `bytes` as `name` (one atomic write: the object is there whole or not at all).
    pub(crate) fn put(&self, name: &str, bytes: Vec<u8>) -> Result<()> {
        self.confined(name, "write")?;
        let path = self.path(name);
        self.run(
            "write",
            name,
            self.store.put(&path, PutPayload::from(bytes)),
        )
        .map(|_| ())
    }

    /// Deletes `name` (nothing there is not an error).
    pub(crate) fn delete(&self, name: &str) -> Result<()> {
        self.confined(name, "delete")?;
        let path = self.path(name);
        let gone = async {
            match self.store.delete(&path).await {
                Err(object_store::Error::NotFound { .. }) => Ok(()),
                other => other,
            }
        };
        self.run("delete", name, gone)
    }

    /// The objects under `dir`, by name.
    pub(crate) fn list(&self, dir: &str) -> Result<Vec<Listed>> {
        let base = self.path(dir);
        let skip = self.prefix.parts().count();
        let found: Vec<object_store::ObjectMeta> =
            self.run("list", dir, self.store.list(Some(&base)).try_collect())?;
        let mut out: Vec<Listed> = found
            .into_iter()
            .map(|m| Listed {
                name: m
                    .location
                    .parts()
                    .skip(skip)
                    .map(|p| p.as_ref().to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
                size: m.size,
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// The bytes of `name`, refused past [`MAX_OBJECT`] (a remote cannot make a sync read
    /// without bound).
    pub(crate) fn get(&self, name: &str, size: u64) -> Result<Vec<u8>> {
        if size > MAX_OBJECT {
            return Err(Error::Corrupt {
                path: format!("{}/{name}", self.url).into(),
                detail: format!("{size} bytes, more than a segment may hold ({MAX_OBJECT})"),
            });
        }
        if let Some(link) = self.link_on_the_way(name) {
            return Err(Error::Corrupt {
                path: link.into(),
                detail: "a symbolic link inside a file:// remote is not read".into(),
            });
        }
        let path = self.path(name);
        // Read as a stream and cut off past the bound: a remote that lists a small object and
        // serves an endless one never makes the sync hold more than a segment may be.
        let bytes = self.run("read", name, async {
            let mut stream = self.store.get(&path).await?.into_stream();
            let mut out = Vec::with_capacity(size as usize);
            while let Some(chunk) = stream.try_next().await? {
                if (out.len() + chunk.len()) as u64 > MAX_OBJECT {
                    return Ok(None);
                }
                out.extend_from_slice(&chunk);
            }
            Ok(Some(out))
        })?;
        bytes.ok_or_else(|| Error::Corrupt {
            path: format!("{}/{name}", self.url).into(),
            detail: "longer than a segment may be".into(),
        })
    }
}

fn remote_io(what: &str, op: &'static str, e: object_store::Error) -> Error {
    Error::io(
        std::path::Path::new(what),
        op,
        std::io::Error::other(e.to_string()),
    )
}

/// An S3-compatible bucket: credentials and region from the usual environment
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, …).
#[cfg(feature = "s3")]
fn s3(url: &url::Url, spec: &RemoteSpec) -> Result<Box<dyn ObjectStore>> {
    // rustls on ring, installed once for the process (a no-op when the app chose one).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bucket = url.host_str().unwrap_or_default();
    let mut b = object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_conditional_put(object_store::aws::S3ConditionalPut::ETagMatch)
        .with_client_options(
            object_store::ClientOptions::new()
                .with_timeout(spec.timeout)
                .with_connect_timeout(spec.timeout.min(Duration::from_secs(10))),
        )
        .with_retry(object_store::RetryConfig {
            max_retries: 3,
            retry_timeout: spec.timeout,
            ..object_store::RetryConfig::default()
        });
    if let Some(e) = &spec.endpoint {
        b = b
            .with_endpoint(e)
            .with_allow_http(e.starts_with("http://"))
            .with_virtual_hosted_style_request(false);
    }
    if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none()
    {
        b = b.with_region("us-east-1");
    }
    b.build()
        .map(|s| Box::new(s) as Box<dyn ObjectStore>)
        .map_err(|e| remote_io(&spec.url, "open", e))
}

#[cfg(not(feature = "s3"))]
fn s3(_: &url::Url, spec: &RemoteSpec) -> Result<Box<dyn ObjectStore>> {
    Err(InvalidInput::Options(format!(
        "remote {}: this build of memloop syncs with file:// remotes only (build with the `s3` feature)",
        spec.url
    ))
    .into())
}
