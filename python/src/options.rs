//! `Memory(...)`'s keyword arguments as the engine's [`memloop::Options`].

use std::path::PathBuf;
use std::sync::Arc;

use memloop::{Clock, DeviceChoice, Durability, HashingEmbedder, Options, VectorEncoding};
use pyo3::prelude::*;

use crate::args::{arg, flag, int, number, optional_int, optional_text};
use crate::errors::invalid;
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
    pub max_text_bytes: Option<&'a Bound<'py, PyAny>>,
    pub recall_ef: Option<&'a Bound<'py, PyAny>>,
    pub index_vectors: Option<&'a Bound<'py, PyAny>>,
}

fn given<'a, 'py>(o: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    o.filter(|o| !o.is_none())
}

impl OpenArgs<'_, '_> {
    /// The engine's options (hooks are installed by the caller).
    pub(crate) fn options(&self) -> PyResult<Options> {
        let mut o = Options::default();
        if let Some(dim) =
            optional_int::<usize>(self.hashing_embedder, "hashing_embedder", "1..=65536")?
        {
            if !(1..=65_536).contains(&dim) {
                return Err(invalid(format!(
                    "hashing_embedder dimension {dim} is outside 1..=65536"
                )));
            }
            o.embedder = Some(Arc::new(HashingEmbedder::new(dim)));
        }
        if let Some(m) = given(self.model) {
            o.model_dir = Some(arg::<PathBuf>(m, "model")?);
        }
        if let Some(d) = optional_text(self.device, "device")? {
            o.device = d
                .parse::<DeviceChoice>()
                .map_err(|e| invalid(format!("device: {e}")))?;
            if !o.device.is_supported() {
                return Err(invalid(format!(
                    "device {d:?}: this library was built without CUDA support (rebuild with the `cuda` feature), use \"cpu\""
                )));
            }
        }
        let start = given(self.start).map(|s| millis(s, "start")).transpose()?;
        o.clock = match optional_text(self.clock, "clock")?.as_deref() {
            None | Some("system") => {
                if start.is_some() {
                    return Err(invalid("start needs clock=\"manual\""));
                }
                Clock::System
            }
            Some("manual") => Clock::manual(start.unwrap_or(0)),
            Some(other) => {
                return Err(invalid(format!(
                    "clock {other:?} is neither \"system\" nor \"manual\""
                )))
            }
        };
        if let Some(s) = given(self.sync) {
            if !flag(s)? {
                o.durability = Durability::Grouped;
            }
        }
        if let Some(t) = self.dedup_threshold {
            o.dedup_threshold = if t.is_none() {
                None
            } else {
                Some(number(t, "dedup_threshold")? as f32)
            };
        }
        if let Some(n) = optional_int::<usize>(self.capacity, "capacity", "0..2^64")? {
            o.forgetting.capacity = Some(n);
        }
        let per_user =
            optional_int::<usize>(self.capacity_per_user, "capacity_per_user", "0..2^64")?;
        if let Some(n) = per_user {
            o.forgetting.capacity_per_user = Some(n);
        }
        if let Some(ef) = optional_int::<usize>(self.recall_ef, "recall_ef", "0..2^64")? {
            o.recall_ef = ef;
        }
        if let Some(v) = optional_text(self.index_vectors, "index_vectors")? {
            o.index_vectors = Some(
                v.parse::<VectorEncoding>()
                    .map_err(|e| invalid(format!("index_vectors: {e}")))?,
            );
        }
        if let Some(n) = given(self.max_text_bytes) {
            o.max_text_bytes = int(n, "max_text_bytes", "0..2^64")?;
        }
        Ok(o)
    }
}
