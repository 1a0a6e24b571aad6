//! Opening a store: lock, database, model check, catalog, index recovery.

use std::path::Path;

use std::sync::Arc;
use std::time::Instant;

use memloop_index::{Index, Params, UnitVectors, VectorEncoding};
use parking_lot::{Mutex, RwLock};

use super::index_state::IndexState;
use super::{background, IndexRecovery, Inner, Memory, OpenReport, WriterState};
use crate::catalog::CatalogSlot;
use crate::crypt::ring::KeyRing;
use crate::crypt::seal::Sealer;
use crate::crypt::{Encryption, KeyError};
use crate::embedder::{load_model_for_new_store, load_model_with, TextEmbedder};
use crate::error::{Error, Result};
use crate::hooks::CrossEncoderReranker;
use crate::invalid::InvalidInput;
use crate::item::MemoryId;
use crate::options::Options;
use crate::store::lock::ProcessLock;
use crate::store::manifest::{Manifest, STORE_VERSION};
use crate::store::sealing::Sealing;
use crate::store::{Store, Tx};
use memloop_embed::{DocumentPooling, Precision as EncoderPrecision};

impl Memory {
    /// Opens the store in `dir`, creating it if needed.
    ///
    /// # Errors
    /// [`crate::Error::Locked`] at once if another process has it open;
    /// [`crate::Error::ModelMismatch`] if it was built with another model;
    /// [`crate::Error::UnsupportedVersion`] for a newer format; [`crate::Error::Embed`] if the
    /// model cannot be loaded; [`crate::Error::Store`] / [`crate::Error::Io`].
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Memory> {
        let dir = dir.as_ref();
        options
            .forgetting
            .validate()
            .map_err(|e| Error::InvalidInput(InvalidInput::Options(e)))?;
        if !(1..=crate::options::MAX_TEXT_BYTES_LIMIT).contains(&options.max_text_bytes) {
            return Err(InvalidInput::Options(format!(
                "max_text_bytes {} is outside 1..={}",
                options.max_text_bytes,
                crate::options::MAX_TEXT_BYTES_LIMIT
            ))
            .into());
        }
        #[cfg(feature = "test-encryption")]
        let options = encrypt_for_tests(options);
        // The manifest (a hint: the database decides) of a store already there.
        let existing = crate::store::is_store(dir);
        let manifest = Manifest::read(dir).filter(|_| existing);
        // The key first: a wrong or missing one creates and writes nothing.
        let sealer = match &options.encryption {
            None => None,
            Some(enc) => {
                let clock = options.clock.clone();
                Some(Arc::new(Sealer::new(
                    open_ring(dir, manifest.as_ref(), enc)?,
                    Box::new(move || clock.now()),
                )))
            }
        };
        precheck_encryption(dir, manifest.as_ref(), sealer.as_deref())?;
        // The cross-encoder before anything is written: a bad directory leaves no store behind.
        if options.reranker_model.is_some() && !options.hooks.reranker_is_default() {
            return Err(InvalidInput::Options(
                "reranker_model and a reranker of the caller's own exclude each other: pass one of them"
                    .into(),
            )
            .into());
        }
        let reranker = options
            .reranker_model
            .as_deref()
            .map(CrossEncoderReranker::load)
            .transpose()?;
        crate::store::dir::create_private(dir)?;
        crate::store::dir::check_safe(dir, options.allow_unsafe_directory)?;
        let lock = ProcessLock::acquire(dir)?;
        let embedder: Arc<dyn TextEmbedder> = match &options.embedder {
            Some(e) => e.clone(),
            None => {
                let (model, device) = (options.model_dir.as_deref(), options.device);
                let pooling = match options.pooling {
                    Some(p) => p,
                    None if !existing => DocumentPooling::Sentences,
                    None => recorded_pooling(manifest.as_ref()),
                };
                Arc::new(match options.precision {
                    Some(p) => load_model_with(model, device, p, pooling)?,
                    None if !existing => load_model_for_new_store(model, device, pooling)?,
                    None => load_model_with(
                        model,
                        device,
                        recorded_precision(manifest.as_ref()),
                        pooling,
                    )?,
                })
            }
        };
        let started = Instant::now();
        remove_stale_temporaries(dir);
        precheck_database(dir, sealer.as_deref())?;
        let mut store = Store::open(dir, options.storage_faults.clone())?;
        store.sealing = Sealing(sealer.clone());
        check_encryption(dir, &store)?;
        let (fingerprint, version) = check_model(dir, &store, embedder.as_ref())?;
        // A store keeps (and recall reads) sentence vectors from format 2 on, when its model
        // pools texts by sentences (the only embedder that makes them).
        let sentences = version >= 2
            && DocumentPooling::of_model_name(fingerprint.split(':').next().unwrap_or_default())
                == DocumentPooling::Sentences;
        let store_id = store_id(&store)?;
        let mut options = options;
        if let Some(r) = reranker {
            options.hooks.reranker = Arc::new(r);
        }
        options.index_vectors = Some(index_vectors(&store, options.index_vectors, existing)?);
        let mut manifest = Manifest::new(fingerprint.clone(), embedder.dim(), version);
        manifest.encryption = sealer.as_ref().map(|s| s.describe());
        manifest.sync_to(dir, store.faults.as_ref())?;
        let live = store.count()?;
        let (index, recovery, verified) =
            load_index(dir, &store, &options, embedder.dim(), live, store_id)?;
        // A file showing the stamp this store recorded when it saved it is the file it saved.
        let trusted = verified
            || index
                .file_stamp()
                .is_some_and(|s| super::index_stamp::recorded(&store) == Some(s));
        let store = Arc::new(store);
        let catalog = CatalogSlot::load_in_background(
            store.clone(),
            options.forgetting.clone(),
            options.clock.now(),
        );
        let recovery_reason = match &recovery {
            IndexRecovery::Rebuilt(why) => Some(why.clone()),
            _ => None,
        };
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            store,
            index: IndexState::new(index, verified, trusted, recovery_reason),
            catalog,
            embedder,
            fingerprint,
            sentences,
            open_report: OpenReport {
                index: recovery,
                store_open: started.elapsed(),
                index_trusted_by_stamp: trusted && !verified,
            },
            options,
            writer: Mutex::new(WriterState::default()),
            accessed: Mutex::default(),
            store_id,
            background_error: Mutex::new(None),
            erasure_bounds: Mutex::new(None),
            lexical: RwLock::new(None),
            observing: Mutex::new(()),
            _lock: lock,
        });
        if matches!(inner.open_report.index, IndexRecovery::Rebuilt(_)) {
            // A rebuild is expensive; make it stick. Best effort: the index is a cache, and a
            // store on a full disk must still open for reading (the next checkpoint retries).
            let _ = inner.checkpoint(false);
        }
        let background = background::Background::start(&inner);
        let memory = Memory {
            inner,
            background: Some(background),
        };
        // An erasure a crash interrupted after its rows went is completed before anything
        // else reads the store: its key destroyed and its receipt logged.
        memory.complete_pending_erasure()?;
        Ok(memory)
    }
}

/// The model name an existing store's manifest records, before the fingerprint's first `:`
/// (`all-MiniLM-L6-v2+int8+sentences`); empty for an unreadable or missing manifest (a store
/// from before manifests). Only a default for the encoder's settings: the model check against
/// the database still decides.
fn recorded_model_name(manifest: Option<&Manifest>) -> &str {
    let model = manifest.map(|m| m.model.as_str()).unwrap_or_default();
    model.split(':').next().unwrap_or_default()
}

/// The encoder precision an existing store was written with (`<model>+int8`); f32 for a name
/// without one. A new store takes [`memloop_embed::Precision::preferred`].
fn recorded_precision(manifest: Option<&Manifest>) -> EncoderPrecision {
    EncoderPrecision::of_model_name(recorded_model_name(manifest))
}

/// How an existing store's texts were pooled (`<model>+sentences`); whole for a name without
/// it. A new store takes [`DocumentPooling::Sentences`].
fn recorded_pooling(manifest: Option<&Manifest>) -> DocumentPooling {
    DocumentPooling::of_model_name(recorded_model_name(manifest))
}

/// Records the model and the format version in a new store, or checks them against the
/// stored ones; returns the fingerprint and the store's format version.
fn check_model(dir: &Path, store: &Store, embedder: &dyn TextEmbedder) -> Result<(String, u32)> {
    let loaded = embedder.fingerprint();
    let version = store.meta_u64("version")?;
    if version > u64::from(STORE_VERSION) {
        return Err(Error::UnsupportedVersion {
            path: store.path.clone(),
            found: version as u32,
            supported: STORE_VERSION,
        });
    }
    match store.meta("model")? {
        Some(stored) => {
            let stored = String::from_utf8_lossy(&stored).into_owned();
            if stored != loaded {
                return Err(Error::ModelMismatch {
                    path: dir.to_path_buf(),
                    store: stored,
                    loaded,
                });
            }
        }
        None => {
            let mut tx = Tx::begin(store, true)?;
            tx.set_meta("model", loaded.as_bytes())?;
            tx.set_meta("version", &u64::from(STORE_VERSION).to_le_bytes())?;
            tx.commit()?;
            return Ok((loaded, STORE_VERSION));
        }
    }
    // A store from before the version was recorded is version 1.
    Ok((loaded, (version as u32).max(1)))
}

/// Opens the index file and replays the change log into it, or rebuilds it from the stored
/// vectors when it is missing, unreadable, from another store, or out of step. Only the cheap
/// checks run here (O(1) in the file's size); the third value says whether the index is also
/// fully verified already (rebuilt, new, or `verify_index` set), else `verify` checks it next.
fn load_index(
    dir: &Path,
    store: &Store,
    options: &Options,
    dim: usize,
    live: usize,
    store_id: [u8; 16],
) -> Result<(Index, IndexRecovery, bool)> {
    let (path, generation) = super::index_file::current(dir, store)?;
    // Older generations (and one a crash left unrecorded) are not needed any more.
    super::index_file::remove_stale(dir, generation);
    let seq = store.meta_u64("seq")?;
    let pruned = store.meta_u64("pruned_through")?;
    let reason: Option<String> = if !path.exists() {
        (live > 0).then(|| "no index file".to_string())
    } else {
        match super::index_file::open(&path, store, store_id, options.verify_index) {
            Err(super::index_file::Unusable::KeyReplaced) => {
                Some("index file sealed under a replaced key (an erasure since)".to_string())
            }
            Err(super::index_file::Unusable::Failed(e)) => {
                Some(format!("index file unusable: {e}"))
            }
            Ok(ix) if ix.owner().is_some_and(|o| o != store_id) => {
                Some("index file belongs to another store".to_string())
            }
            Ok(ix) if ix.dim() != dim => Some(format!(
                "index holds {}-d vectors, the model makes {dim}-d",
                ix.dim()
            )),
            Ok(ix) if Some(ix.params().vectors) != options.index_vectors => Some(format!(
                "index stores {} vectors, the store asks for {}",
                ix.params().vectors,
                options.index_vectors.unwrap_or_default()
            )),
            Ok(ix) if ix.checkpoint() > seq => Some(format!(
                "index checkpoint {} is past the store's last change {seq}",
                ix.checkpoint()
            )),
            Ok(ix) if ix.checkpoint() < pruned => Some(format!(
                "index checkpoint {} predates the change log (pruned through {pruned})",
                ix.checkpoint()
            )),
            Ok(ix) => {
                let replayed = replay(store, &ix, seq)?;
                if ix.len() == live {
                    let recovery = if replayed == 0 {
                        IndexRecovery::Clean
                    } else {
                        IndexRecovery::Replayed(replayed)
                    };
                    return Ok((ix, recovery, options.verify_index));
                }
                Some(format!(
                    "index holds {} vectors after replay, the store {live}",
                    ix.len()
                ))
            }
        }
    };
    let index = Index::new(params(options, dim)?)?;
    match reason {
        None => Ok((index, IndexRecovery::Clean, true)),
        Some(why) => {
            rebuild(store, &index)?;
            Ok((index, IndexRecovery::Rebuilt(why), true))
        }
    }
}

/// This database's id, made (16 random bytes) the first time a store is opened by a build
/// that records it in index files.
fn store_id(store: &Store) -> Result<[u8; 16]> {
    if let Some(id) = store.meta("store_id")? {
        if let Ok(id) = <[u8; 16]>::try_from(id.as_slice()) {
            return Ok(id);
        }
    }
    let id = random_id();
    let mut tx = Tx::begin(store, true)?;
    tx.set_meta("store_id", &id)?;
    tx.commit()?;
    Ok(id)
}

/// The index's vector encoding: `requested`, recorded in the store when it changes the
/// recorded one, else the recorded one. A new store (`existing` false) that asks for none
/// takes int8 codes, re-scored on the store's f32 vectors (the same answers from an index a
/// third the size, BENCHMARKS.md), recorded; a store made before that default that never chose
/// keeps f32.
fn index_vectors(
    store: &Store,
    requested: Option<VectorEncoding>,
    existing: bool,
) -> Result<VectorEncoding> {
    let requested = requested.or((!existing).then_some(VectorEncoding::Int8));
    let recorded = match store.meta("index_vectors")? {
        Some(name) => String::from_utf8_lossy(&name)
            .parse::<VectorEncoding>()
            .map_err(|e| Error::Corrupt {
                path: store.path.clone(),
                detail: format!("meta index_vectors: {e}"),
            })?,
        None => VectorEncoding::F32,
    };
    match requested {
        Some(r) if r != recorded => {
            let mut tx = Tx::begin(store, true)?;
            tx.set_meta("index_vectors", r.name().as_bytes())?;
            tx.commit()?;
            Ok(r)
        }
        _ => Ok(recorded),
    }
}

/// 16 bytes from the standard library's per-process random hash keys, the time and the pid.
fn random_id() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut out = [0u8; 16];
    for half in out.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(crate::platform::process_id());
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

/// Removes temporary files a crash or a full disk left behind (an index or manifest save that
/// never reached its rename). Best effort: a file that cannot be removed is overwritten by the
/// next save anyway.
fn remove_stale_temporaries(dir: &Path) {
    for name in crate::store::OWN_FILES
        .iter()
        .filter(|n| n.ends_with(".tmp"))
    {
        let _ = std::fs::remove_file(dir.join(name));
    }
}

pub(crate) fn params(options: &Options, dim: usize) -> Result<Params> {
    Ok(Params::builder(dim)
        .m(options.index_m)
        .ef_construction(options.index_ef_construction)
        .ef_search(options.recall_ef)
        .vectors(options.index_vectors.unwrap_or_default())
        .build()?)
}

/// Applies the logged changes in (index checkpoint, `seq`] to `index`; returns how many ids
/// it touched.
fn replay(store: &Store, index: &Index, seq: u64) -> Result<usize> {
    let touched = store.vector_changes(index.checkpoint() + 1, seq)?;
    for &id in &touched {
        if index.contains(id.get()) {
            index.delete(id.get())?;
        }
    }
    let (mut ids, mut flat) = (Vec::new(), Vec::new());
    for (id, v) in store.vectors(&touched)? {
        ids.push(id.get());
        flat.extend_from_slice(&v);
    }
    index.insert_batch(&ids, &UnitVectors::new(flat, index.dim())?)?;
    Ok(touched.len())
}

/// Inserts every stored vector into the empty `index`.
pub(crate) fn rebuild(store: &Store, index: &Index) -> Result<()> {
    let (ids, flat) = store.all_vectors(index.dim())?;
    let ids: Vec<u64> = ids.into_iter().map(MemoryId::get).collect();
    index.insert_batch(&ids, &UnitVectors::new(flat, index.dim())?)?;
    Ok(())
}

impl Inner {
    /// The index checkpoint recorded as saved.
    pub(crate) fn saved(&self) -> u64 {
        self.index.saved()
    }
}

/// The key ring of `enc`: read and unlocked; made (with the key file) only for a new store
/// (`manifest` is an existing store's).
fn open_ring(dir: &Path, manifest: Option<&Manifest>, enc: &Encryption) -> Result<KeyRing> {
    if manifest.is_some_and(|m| m.encryption.is_none()) {
        return Err(KeyError::NotEncrypted {
            path: dir.to_path_buf(),
        }
        .into());
    }
    if KeyRing::exists(enc) || crate::store::is_store(dir) {
        return Ok(KeyRing::load(enc)?);
    }
    match KeyRing::create(enc) {
        // Another store made the same key file a moment ago: share its ring.
        Err(KeyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
            Ok(KeyRing::load(enc)?)
        }
        other => Ok(other?),
    }
}

/// Before the database is opened (which writes to it): the manifest's word on encryption
/// against the key given, so a missing or foreign key changes no byte of the store. Only a
/// hint: [`check_encryption`] then checks the database's own record.
fn precheck_encryption(
    dir: &Path,
    manifest: Option<&Manifest>,
    sealer: Option<&Sealer>,
) -> Result<()> {
    let Some(manifest) = manifest else {
        return Ok(());
    };
    let ring = manifest
        .encryption
        .as_ref()
        .and_then(|e| e.get("ring"))
        .and_then(|r| r.as_str())
        .map(str::to_owned);
    match (ring, sealer) {
        (Some(_), None) => Err(KeyError::Missing {
            path: dir.to_path_buf(),
            detail: String::new(),
        }
        .into()),
        (Some(ring), Some(s)) if ring != hex::encode(s.ring_id()) => Err(KeyError::Wrong {
            path: s.key_file(),
            detail: format!(
                "this key file belongs to another store than {}",
                dir.display()
            ),
        }
        .into()),
        _ => Ok(()),
    }
}

/// What the database records about encryption, as [`encryption_verdict`] weighs it.
struct Recorded {
    /// The ring the store was encrypted with (`encryption_ring`), if any.
    ring: Option<Vec<u8>>,
    /// How many keys the store's erasures destroyed.
    erased: u64,
    /// Whether the store holds a model (it is not new).
    has_model: bool,
}

/// Whether the key given (`sealer`) opens a store that recorded `r`: an error for a missing,
/// foreign or older key, `Ok(true)` when a new store must record the ring, else `Ok(false)`.
fn encryption_verdict(dir: &Path, r: &Recorded, sealer: Option<&Sealer>) -> Result<bool> {
    match (&r.ring, sealer) {
        (None, None) => Ok(false),
        (Some(ring), Some(s)) if ring.as_slice() == s.ring_id() => {
            // A key file rolled back past an erasure would hold the erased user's key again
            // (and let records sealed under it back in): the store counts the keys its
            // erasures destroyed, and a ring that knows of fewer is older than the store.
            let known = s.destroyed_count() as u64;
            if known < r.erased {
                return Err(KeyError::Wrong {
                    path: s.key_file(),
                    detail: format!(
                        "this key file is older than the store: it knows of {known} destroyed keys, the store's erasures destroyed {} (give the current key file)",
                        r.erased
                    ),
                }
                .into());
            }
            Ok(false)
        }
        (Some(_), Some(s)) => Err(KeyError::Wrong {
            path: s.key_file(),
            detail: format!(
                "this key file belongs to another store than {}",
                dir.display()
            ),
        }
        .into()),
        (Some(_), None) => Err(KeyError::Missing {
            path: dir.to_path_buf(),
            detail: String::new(),
        }
        .into()),
        (None, Some(_)) if r.has_model => Err(KeyError::NotEncrypted {
            path: dir.to_path_buf(),
        }
        .into()),
        (None, Some(_)) => Ok(true),
    }
}

/// Before the database is opened for writing (redb's open may write its header): the
/// database's own record of encryption, read without a writer, against the key given, so a
/// refused open changes no byte of the store (round 4's L3). A database that cannot be read
/// so (none yet, or one that needs the recovery only a writer does) is checked after the
/// open instead ([`check_encryption`]).
fn precheck_database(dir: &Path, sealer: Option<&Sealer>) -> Result<()> {
    const KEYS: [&str; 3] = ["encryption_ring", crate::store::RING_DESTROYED, "model"];
    let Some([ring, erased, model]) =
        Store::peek_meta(dir, &KEYS).and_then(|v| <[Option<Vec<u8>>; 3]>::try_from(v).ok())
    else {
        return Ok(());
    };
    let erased = erased
        .and_then(|b| <[u8; 8]>::try_from(b.as_slice()).ok())
        .map_or(0, u64::from_le_bytes);
    encryption_verdict(
        dir,
        &Recorded {
            ring,
            erased,
            has_model: model.is_some(),
        },
        sealer,
    )
    .map(|_| ())
}

/// Checks the store's recorded encryption against the key given (a new store records it).
fn check_encryption(dir: &Path, store: &Store) -> Result<()> {
    let recorded = Recorded {
        ring: store.meta("encryption_ring")?,
        erased: store.meta_u64(crate::store::RING_DESTROYED)?,
        has_model: store.meta("model")?.is_some(),
    };
    if encryption_verdict(dir, &recorded, store.sealing.0.as_deref())? {
        if let Some(s) = &store.sealing.0 {
            let mut tx = Tx::begin(store, true)?;
            tx.set_meta("encryption_ring", &s.ring_id())?;
            tx.commit()?;
        }
    }
    Ok(())
}

/// Under the `test-encryption` feature (the test matrix's encrypted run), every store opened
/// without a key is opened encrypted with one key file for the whole process (in the
/// temporary directory), so exports move between a test's stores as they do in the clear.
#[cfg(feature = "test-encryption")]
fn encrypt_for_tests(mut options: Options) -> Options {
    if options.encryption.is_none() {
        // Named after the test binary, so a child process it runs (a crash test) shares it.
        let exe = std::env::current_exe().unwrap_or_default();
        let tag = xxhash_rust::xxh3::xxh3_64(exe.as_os_str().as_encoded_bytes());
        let name = format!("memloop-test-matrix-{tag:016x}.key");
        options.encryption = Some(Encryption::key_file(std::env::temp_dir().join(name)));
    }
    options
}
