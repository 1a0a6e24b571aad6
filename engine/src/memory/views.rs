//! The views of a store beside its handle: [`Scoped`] (a caller confined to a scope),
//! [`Admin`] (upkeep), [`Advanced`] (the lower-level calls) and [`Transfer`] (exports and
//! imports). Each view's methods are written where their work is (the feature folders add
//! them with `impl Admin<'_>` and so on), so their docs are written once; rustdoc shows each
//! view on one page.

use std::path::Path;
use std::sync::Arc;

use crate::embedder::TextEmbedder;
use crate::item::Scope;

use super::{index_file, DiskUsage, Memory, OpenReport};

impl Memory {
    /// A view of this store confined to `scope`: every call made through it acts within the
    /// scope, enforced in the engine (a memory of another scope is not found, not changed).
    pub fn scoped(&self, scope: &Scope) -> Scoped<'_> {
        Scoped {
            memory: self,
            scope: scope.clone(),
        }
    }

    /// The store's upkeep: checkpoints, checks, sweeps, keys and receipts, what opening found.
    pub fn admin(&self) -> Admin<'_> {
        Admin { memory: self }
    }

    /// The lower-level calls tools, importers and benchmarks make: a raw filter scan, a
    /// listing, recall by vector, contexts of given hits, documents, pre-embedded writes.
    pub fn advanced(&self) -> Advanced<'_> {
        Advanced { memory: self }
    }

    /// Exports and imports: memloop's portable file and the Arrow and Parquet change streams.
    pub fn transfer(&self) -> Transfer<'_> {
        Transfer { memory: self }
    }
}

/// A store seen by a caller confined to one scope ([`Memory::scoped`]).
#[derive(Debug)]
pub struct Scoped<'a> {
    pub(crate) memory: &'a Memory,
    pub(crate) scope: Scope,
}

impl<'a> Scoped<'a> {
    /// The scope every call acts within.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }
}

/// The store's upkeep ([`Memory::admin`]).
#[derive(Debug, Clone, Copy)]
pub struct Admin<'a> {
    pub(crate) memory: &'a Memory,
}

/// The lower-level calls ([`Memory::advanced`]).
#[derive(Debug, Clone, Copy)]
pub struct Advanced<'a> {
    pub(crate) memory: &'a Memory,
}

/// Exports and imports ([`Memory::transfer`]).
#[derive(Debug, Clone, Copy)]
pub struct Transfer<'a> {
    pub(crate) memory: &'a Memory,
}

impl<'a> Admin<'a> {
    /// How the current memories divide by kind, tier, user and namespace (from the in-memory
    /// catalog: no database read).
    ///
    /// # Errors
    /// [`crate::Error::Store`] when the catalog failed to load.
    pub fn census(&self) -> crate::error::Result<crate::catalog::Census> {
        Ok(self.memory.inner.catalog.get()?.read().census())
    }

    /// Bytes on disk, by file.
    ///
    /// # Errors
    /// [`crate::Error::Io`] when the database file cannot be read.
    pub fn disk_usage(&self) -> crate::error::Result<DiskUsage> {
        let size = |path: &Path| std::fs::metadata(path).map(|m| m.len());
        let (index, _) = index_file::current(&self.memory.inner.dir, &self.memory.inner.store)?;
        Ok(DiskUsage {
            database: size(&self.memory.inner.store.path)
                .map_err(|e| crate::error::Error::io(&self.memory.inner.store.path, "stat", e))?,
            index: size(&index).unwrap_or(0),
        })
    }

    /// What opening found.
    pub fn open_report(&self) -> &'a OpenReport {
        &self.memory.inner.open_report
    }

    /// The longest text one memory may hold here ([`crate::Options::max_text_bytes`]).
    pub fn max_text_bytes(&self) -> usize {
        self.memory.inner.options.max_text_bytes
    }

    /// The embedding model's fingerprint recorded in the store.
    pub fn fingerprint(&self) -> &'a str {
        &self.memory.inner.fingerprint
    }

    /// The embedder.
    pub fn embedder(&self) -> &'a Arc<dyn TextEmbedder> {
        &self.memory.inner.embedder
    }
}
