//! `export` and `import` as every door asks for them: the file, its format, and for an export
//! which memories (a namespace, a scope) and, for a change stream, from which sequence number.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::selection::Selection;
use crate::invalid::InvalidInput;
use crate::item::Scope;

/// The file formats of an export.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TransferFormat {
    /// memloop's portable, checksummed file (the default).
    #[default]
    Mlx,
    /// A change stream as an Arrow IPC stream.
    Arrow,
    /// A change stream as a Parquet file.
    Parquet,
}

impl TransferFormat {
    /// The format named `s` (`mlx`, `arrow`, `parquet`), or the one error every door gives.
    ///
    /// # Errors
    /// [`InvalidInput::Field`] naming `format`.
    pub fn named(s: &str) -> Result<TransferFormat, InvalidInput> {
        match s {
            "mlx" => Ok(TransferFormat::Mlx),
            "arrow" => Ok(TransferFormat::Arrow),
            "parquet" => Ok(TransferFormat::Parquet),
            _ => Err(InvalidInput::Field {
                field: "format",
                reason: format!("{s:?} is not one of mlx, arrow, parquet"),
            }),
        }
    }
}

/// `export`: memories (with their vectors) to a file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportRequest {
    /// The file to write.
    pub path: PathBuf,
    /// mlx (default), arrow or parquet.
    #[serde(default)]
    pub format: Option<String>,
    /// Which memories: namespace, kinds, tags, history, as-of (default: every current one).
    #[serde(flatten)]
    pub selection: Selection,
    /// Only this user's, agent's or session's memories.
    #[serde(flatten)]
    pub scope: Scope,
    /// With arrow or parquet: only what changed after this sequence number (deleted and
    /// forgotten memories as delete rows).
    #[serde(default)]
    pub since: Option<u64>,
    /// From an encrypted store: write the file in the clear (an mlx export is otherwise
    /// sealed with the store's key ring; a change stream is refused without this).
    #[serde(default)]
    pub plaintext: bool,
}

impl ExportRequest {
    /// A full mlx export of every memory to `path`.
    pub fn to(path: impl Into<PathBuf>) -> ExportRequest {
        ExportRequest {
            path: path.into(),
            ..ExportRequest::default()
        }
    }

    /// The format, checked, and what no export can do refused: `since` without a
    /// change-stream format.
    ///
    /// # Errors
    /// [`InvalidInput::Field`] naming `format` or `since`.
    pub fn format(&self) -> Result<TransferFormat, InvalidInput> {
        let format = format_of(self.format.as_deref())?;
        if self.since.is_some() && format == TransferFormat::Mlx {
            return Err(InvalidInput::Field {
                field: "since",
                reason: "needs format arrow or parquet".into(),
            });
        }
        Ok(format)
    }
}

/// What an export wrote, as every door shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Exported {
    /// Memories written (upserts and deletes of a change stream).
    pub exported: usize,
    /// The file.
    pub path: PathBuf,
    /// A change stream's memories written as they are now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upserts: Option<usize>,
    /// A change stream's deletes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletes: Option<usize>,
    /// The sequence number a change stream started after (0 for a full export).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// The last sequence number a change stream covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub through: Option<u64>,
    /// What to pass as `since` next time (`through`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_since: Option<u64>,
    /// Bytes a change stream wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// `import`: merge an export file into the store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// The export file.
    pub path: PathBuf,
    /// mlx (default), or arrow / parquet (a full change-stream export).
    #[serde(default)]
    pub format: Option<String>,
}

impl ImportRequest {
    /// The file's format, checked.
    ///
    /// # Errors
    /// [`InvalidInput::Field`] naming `format`.
    pub fn format(&self) -> Result<TransferFormat, InvalidInput> {
        format_of(self.format.as_deref())
    }
}

/// The format named `name`, mlx when none is.
fn format_of(name: Option<&str>) -> Result<TransferFormat, InvalidInput> {
    name.map_or(Ok(TransferFormat::Mlx), TransferFormat::named)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_since_are_checked_once() {
        assert_eq!(
            TransferFormat::named("parquet"),
            Ok(TransferFormat::Parquet)
        );
        let e = TransferFormat::named("csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "format \"csv\" is not one of mlx, arrow, parquet"
        );
        let mut r = ExportRequest::to("/tmp/x");
        assert_eq!(r.format(), Ok(TransferFormat::Mlx));
        r.since = Some(3);
        assert_eq!(
            r.format().unwrap_err().to_string(),
            "since needs format arrow or parquet"
        );
        r.format = Some("arrow".into());
        assert_eq!(r.format(), Ok(TransferFormat::Arrow));
        let parsed: ImportRequest =
            serde_json::from_value(serde_json::json!({"path": "/tmp/x", "format": "csv"})).unwrap();
        assert!(parsed.format().is_err());
        assert!(serde_json::from_value::<ImportRequest>(
            serde_json::json!({"path": "p", "fmt": "x"})
        )
        .is_err());
    }
}
