//! `Memory(...)`'s keyword arguments as the engine's [`memloop::Options`].

use std::path::PathBuf;

use memloop::Options;
use pyo3::prelude::*;

use crate::args::{arg, flag, number, optional_int, optional_text};
use crate::time::millis;

/// The open arguments, as Python gave them.
pub(crate) struct OpenArgs<'a, 'py> {
    pub model: Option<&'a Bound<'py, PyAny>>,
    pub clock: Option<&'a Bound<'py, PyAny>>,
    pub sync: Option<&'a Bound<'py, PyAny>>,
    pub start: Option<&'a Bound<'py, PyAny>>,
    pub capacity: Option<&'a Bound<'py, PyAny>>,
    pub capacity_per_user: Option<&'a Bound<'py, PyAny>>,
    pub dedup_threshold: Option<&'a Bound<'py, PyAny>>,
    pub hashing_embedder: Option<&'a Bound<'py, PyAny>>,
    pub device: Option<&'a Bound<'py, PyAny>>,
    pub precision: Option<&'a Bound<'py, PyAny>>,
    pub reranker_model: Option<&'a Bound<'py, PyAny>>,
    pub max_text_bytes: Option<&'a Bound<'py, PyAny>>,
    pub recall_ef: Option<&'a Bound<'py, PyAny>>,
    pub index_vectors: Option<&'a Bound<'py, PyAny>>,
    pub key_file: Option<&'a Bound<'py, PyAny>>,
    pub passphrase: Option<&'a Bound<'py, PyAny>>,
}

fn given<'a, 'py>(o: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    o.filter(|o| !o.is_none())
}

impl OpenArgs<'_, '_> {
    /// The engine's options (hooks are installed by the caller): the arguments as the
    /// vocabulary's `OpenRequest`, checked by the engine.
    pub(crate) fn options(&self) -> PyResult<Options> {
        let usize_of = |o, name| optional_int::<usize>(o, name, "0..2^64");
        let request = memloop::requests::OpenRequest {
            model: given(self.model)
                .map(|m| arg::<PathBuf>(m, "model"))
                .transpose()?,
            device: optional_text(self.device, "device")?,
            precision: optional_text(self.precision, "precision")?,
            reranker_model: given(self.reranker_model)
                .map(|m| arg::<PathBuf>(m, "reranker_model"))
                .transpose()?,
            clock: optional_text(self.clock, "clock")?,
            start_ms: given(self.start).map(|s| millis(s, "start")).transpose()?,
            sync: given(self.sync).map(flag).transpose()?,
            dedup_threshold: match self.dedup_threshold {
                None => None,
                Some(t) if t.is_none() => Some(None),
                Some(t) => Some(Some(number(t, "dedup_threshold")? as f32)),
            },
            hashing_embedder: usize_of(self.hashing_embedder, "hashing_embedder")?,
            capacity: usize_of(self.capacity, "capacity")?,
            capacity_per_user: usize_of(self.capacity_per_user, "capacity_per_user")?,
            recall_ef: usize_of(self.recall_ef, "recall_ef")?,
            index_vectors: optional_text(self.index_vectors, "index_vectors")?,
            max_text_bytes: usize_of(self.max_text_bytes, "max_text_bytes")?,
            key_file: given(self.key_file)
                .map(|k| arg::<PathBuf>(k, "key_file"))
                .transpose()?,
            passphrase: optional_text(self.passphrase, "passphrase")?,
        };
        Options::from_request(request).map_err(|e| crate::errors::to_python(e.into()))
    }
}
