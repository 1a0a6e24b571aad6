//! `recall`: the memories most related to a query.

use crate::error::Result;
use crate::memory::Memory;
use crate::retrieve::Hit;
use crate::vocabulary::{Door, RecallRequest};

use super::operate::Operate;

/// `recall`'s answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Recalled {
    /// The hits, best first, each with its explanation.
    pub hits: Vec<Hit>,
}

/// [`super::Operation::Recall`].
pub(super) struct Recall;

impl Operate for Recall {
    const NAME: &'static str = "recall";
    const DOC: &'static str = "Find the memories most related to a query, best first, with \
        their ids and scores. Filter by namespace, kinds or tags; `strategy: rerank` also \
        matches keywords (names, numbers); `explain: true` says why each surfaced.";
    const SCOPED: bool = true;
    const READS_ONLY: bool = true;
    type Request = RecallRequest;
    type Answer = Recalled;

    fn absent_from(_: Door) -> Option<&'static str> {
        None
    }

    fn run(memory: &Memory, request: RecallRequest) -> Result<Recalled> {
        let (query, strategy) = request.into_query()?;
        Ok(Recalled {
            hits: memory.retrieve(&query, strategy)?,
        })
    }

    fn text(_: &RecallRequest, recalled: &Recalled) -> String {
        if recalled.hits.is_empty() {
            return "No memory matches.".to_string();
        }
        recalled
            .hits
            .iter()
            .map(|h| {
                format!(
                    "{}. [memory {}, {}, score {:.3}] {}",
                    h.rank + 1,
                    h.item.id,
                    h.item.kind.name(),
                    h.score,
                    h.item.text
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
