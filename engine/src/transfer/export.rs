//! Export: the memories passing a filter, written to one portable file atomically.

use std::path::Path;

use super::format::ExportWriter;
use crate::crypt::ring::Label;
use crate::crypt::seal::Table;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::invalid::InvalidInput;
use crate::item::MemoryId;
use crate::memory::views::Transfer;
use crate::memory::Memory;

impl Memory {
    pub(super) fn export_with(
        &self,
        path: &Path,
        filter: &MemoryFilter,
        plaintext: bool,
    ) -> Result<usize> {
        self.refuse_inside_store(path)?;
        let filter = filter.clone().include_superseded(true);
        let items = self.advanced().scan(&filter, usize::MAX)?;
        let dim = self.admin().embedder().dim();
        let sealer = self.store().sealing.0.as_ref().filter(|_| !plaintext);
        let mut out = ExportWriter::new(
            self.admin().fingerprint(),
            dim,
            items.len(),
            sealer.map(|s| s.ring_id()),
        );
        let ids: Vec<MemoryId> = items.iter().map(|i| i.id).collect();
        for (item, vector) in items.iter().zip(self.store().vector_bytes(&ids)?) {
            let payload = ExportWriter::payload(&item.encode(), &vector);
            match sealer {
                None => out.push(&payload),
                Some(s) => out.push(&s.seal(
                    Table::Export,
                    &out.next_record().to_le_bytes(),
                    Label::of_user(item.user.as_deref()),
                    &payload,
                )?),
            }
        }
        let out = out.finish();
        crate::store::write_atomic(path, &out, self.store().faults.as_ref())?;
        Ok(items.len())
    }

    /// Fails if writing `path` (or its temporary file) would replace one of this store's own
    /// files: the database, the index, the manifest or the lock.
    pub(super) fn refuse_inside_store(&self, path: &Path) -> Result<()> {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let (Ok(parent), Ok(store)) = (
            crate::platform::canonical(parent),
            crate::platform::canonical(self.dir()),
        ) else {
            return Ok(()); // a missing folder: the write fails with its own clear error
        };
        let tmp = path.with_extension("tmp");
        let names = [path.file_name(), tmp.file_name()];
        let clash = names
            .iter()
            .flatten()
            .find(|n| n.to_str().is_some_and(crate::store::is_own_file));
        if let (true, Some(name)) = (parent == store, clash) {
            return Err(InvalidInput::OwnFile {
                path: path.to_path_buf(),
                file: name.to_string_lossy().into_owned(),
                store,
            }
            .into());
        }
        Ok(())
    }
}

impl<'a> Transfer<'a> {
    /// Writes the memories passing `filter` (superseded versions included: history travels with
    /// them) to one portable file at `path`, atomically. Returns how many were written.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a path that would replace one of the store's own files
    /// (`store.redb`, `index.mlx`, …); [`crate::Error::Io`] or [`crate::Error::Store`]; `path` is
    /// then untouched.
    pub fn export(&self, path: impl AsRef<Path>, filter: &MemoryFilter) -> Result<usize> {
        self.memory.export_with(path.as_ref(), filter, false)
    }

    /// [`Transfer::export`] in the clear from an encrypted store (whose exports are otherwise
    /// sealed with its key ring: only a store opened with the same key file imports them).
    /// Only on explicit request: the file holds every exported memory's text and vector.
    ///
    /// # Errors
    /// As [`Transfer::export`].
    pub fn export_plaintext(&self, path: impl AsRef<Path>, filter: &MemoryFilter) -> Result<usize> {
        self.memory.export_with(path.as_ref(), filter, true)
    }
}
