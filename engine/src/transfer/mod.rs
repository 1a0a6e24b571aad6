//! Memory transfer: one portable, checksummed file per export ([`format`]); import merges it.

mod columnar;
mod export;
mod format;
mod import;
mod requests;
mod salvage;

pub(crate) use columnar::read_stream as read_columnar;
pub use columnar::{ChangeExport, ColumnarFormat};

pub(crate) use format::parse;
pub(crate) use import::take_metadata;
pub use salvage::salvage;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct ImportReport {
    /// Records in the file.
    pub records: usize,
    /// New memories added.
    pub added: usize,
    /// Existing memories whose metadata the (newer) imported record replaced.
    pub merged: usize,
    /// Records already present with metadata at least as new.
    pub unchanged: usize,
    /// True if the file came from another model and its texts were re-embedded.
    pub reembedded: bool,
}
