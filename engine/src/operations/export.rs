//! `export`: write the store (or part of it) to a file.

use crate::error::Result;
use crate::memory::Memory;
use crate::vocabulary::{Door, ExportRequest, Exported};

use super::operate::{Operate, FILES_ON_THE_SERVER, INSPECTOR_LOOKS};

/// [`super::Operation::Export`].
pub(super) struct Export;

impl Operate for Export {
    const NAME: &'static str = "export";
    const DOC: &'static str = "Write the store's memories (or a namespace's or a scope's) to a \
        file: memloop's portable file, or an Arrow or Parquet change stream for other engines.";
    const SCOPED: bool = false;
    const READS_ONLY: bool = false;
    type Request = ExportRequest;
    type Answer = Exported;

    fn absent_from(door: Door) -> Option<&'static str> {
        match door {
            Door::Mcp => Some(FILES_ON_THE_SERVER),
            Door::Inspector => Some(INSPECTOR_LOOKS),
            _ => None,
        }
    }

    fn run(memory: &Memory, request: ExportRequest) -> Result<Exported> {
        memory.transfer().export_request(&request)
    }

    fn text(_: &ExportRequest, exported: &Exported) -> String {
        // The answer's JSON as it is: its fields are what a model needs.
        serde_json::to_string(exported).unwrap_or_default()
    }
}
