//! The vocabulary's export and import requests carried out on a store: one function each,
//! what every door calls.

use super::{ColumnarFormat, ImportReport};
use crate::error::Result;
use crate::memory::views::Transfer;
use crate::memory::Memory;
use crate::vocabulary::{ExportRequest, Exported, ImportRequest, TransferFormat};

impl Memory {}

impl<'a> Transfer<'a> {
    /// Carries out an [`crate::requests::ExportRequest`]: an mlx file of the memories it selects,
    /// or a change stream (arrow, parquet) of what changed after `since`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a request that [`crate::requests::ExportRequest::format`]
    /// refuses or a path inside the store; as [`Transfer::export`] and
    /// [`Transfer::export_changes`].
    pub fn export_request(&self, r: &ExportRequest) -> Result<Exported> {
        let format = r.format()?;
        let filter = r.selection.filter(&r.scope)?;
        let columnar = match format {
            TransferFormat::Mlx => None,
            TransferFormat::Arrow => Some(ColumnarFormat::Arrow),
            TransferFormat::Parquet => Some(ColumnarFormat::Parquet),
        };
        let Some(format) = columnar else {
            return Ok(Exported {
                exported: self.memory.export_with(&r.path, &filter, r.plaintext)?,
                path: r.path.clone(),
                upserts: None,
                deletes: None,
                since: None,
                through: None,
                next_since: None,
                bytes: None,
            });
        };
        if self.memory.store().sealing.on() && !r.plaintext {
            return Err(crate::invalid::InvalidInput::Options(
                "this store is encrypted and Arrow / Parquet files cannot be sealed: export mlx (sealed), or ask for the change stream in the clear with plaintext".into(),
            )
            .into());
        }
        let c = self
            .memory
            .transfer()
            .export_changes(&r.path, r.since, &filter, format)?;
        Ok(Exported {
            exported: c.upserts + c.deletes,
            path: r.path.clone(),
            upserts: Some(c.upserts),
            deletes: Some(c.deletes),
            since: Some(c.since),
            through: Some(c.through),
            next_since: Some(c.through),
            bytes: Some(c.bytes),
        })
    }

    /// Carries out an [`crate::requests::ImportRequest`]: merges the file in its format.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an unknown format; as [`Transfer::import`] and
    /// [`Transfer::import_columnar`].
    pub fn import_request(&self, r: &ImportRequest) -> Result<ImportReport> {
        match r.format()? {
            TransferFormat::Mlx => self.memory.transfer().import(&r.path),
            TransferFormat::Arrow | TransferFormat::Parquet => {
                self.memory.transfer().import_columnar(&r.path)
            }
        }
    }
}
