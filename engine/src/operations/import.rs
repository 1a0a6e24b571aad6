//! `import`: read an export into the store.

use crate::error::Result;
use crate::memory::Memory;
use crate::transfer::ImportReport;
use crate::vocabulary::{Door, ImportRequest};

use super::operate::{Operate, FILES_ON_THE_SERVER, INSPECTOR_LOOKS};

/// [`super::Operation::Import`].
pub(super) struct Import;

impl Operate for Import {
    const NAME: &'static str = "import";
    const DOC: &'static str = "Read a memloop export or change stream into the store.";
    const SCOPED: bool = false;
    const READS_ONLY: bool = false;
    type Request = ImportRequest;
    type Answer = ImportReport;

    fn absent_from(door: Door) -> Option<&'static str> {
        match door {
            Door::Mcp => Some(FILES_ON_THE_SERVER),
            Door::Inspector => Some(INSPECTOR_LOOKS),
            _ => None,
        }
    }

    fn run(memory: &Memory, request: ImportRequest) -> Result<ImportReport> {
        memory.transfer().import_request(&request)
    }

    fn text(_: &ImportRequest, report: &ImportReport) -> String {
        // The answer's JSON as it is: its fields are what a model needs.
        serde_json::to_string(report).unwrap_or_default()
    }
}
