//! Context assembly under a token budget (MaxMind's precision levels).
//!
//! The best-ranked share of the memories enters as "Key Reference" at original precision, the
//! rest as "General Reference" at brief; feedback shifts a memory's starting precision. While
//! the rendered context is over budget, the least relevant memory that can still lose precision
//! loses one step (original → concise → brief); when every memory is at brief, the least
//! relevant is dropped. Then room left over is given back: dropped memories return at brief if
//! they fit, and memories below their starting precision regain it, most relevant first. The
//! count is always of the whole rendered text, by the real tokenizer, so the context never
//! exceeds the budget.
//!
//! `build.rs` gathers the memories from the store (Memory-Only and Memory-Doc contexts,
//! documents with their chunks and structures). What a caller asks for is in `vocabulary/`;
//! the summarizer and token counter hooks are in `hooks/`.

mod build;

pub use crate::hooks::{Extractive, Summarizer, Summary, TokenCounter};
pub use crate::vocabulary::{
    ContextMode, ContextRequest, DocumentIds, DocumentRef, Structures, CHUNK_OVERLAP, CHUNK_TOKENS,
};

use crate::item::MemoryId;

/// One of a memory's three texts.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// One line.
    Brief,
    /// The gist.
    Concise,
    /// The full text.
    Original,
}

impl Precision {
    /// The name used in JSON and the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Brief => "brief",
            Precision::Concise => "concise",
            Precision::Original => "original",
        }
    }

    fn up(self) -> Precision {
        match self {
            Precision::Brief => Precision::Concise,
            _ => Precision::Original,
        }
    }

    fn down(self) -> Precision {
        match self {
            Precision::Original => Precision::Concise,
            _ => Precision::Brief,
        }
    }

    /// `self` moved by `steps` (positive: higher), clamped.
    pub(crate) fn shifted(self, steps: i8) -> Precision {
        let level = (self as i8 + steps).clamp(0, 2);
        [Precision::Brief, Precision::Concise, Precision::Original][level as usize]
    }
}

/// The label of the best-ranked memories.
pub const KEY_REFERENCE: &str = "Key Reference";
/// The label of the others.
pub const GENERAL_REFERENCE: &str = "General Reference";

/// One memory in a context.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Block {
    /// [`KEY_REFERENCE`] or [`GENERAL_REFERENCE`].
    pub label: &'static str,
    /// The memory (in Memory-Doc mode, the document's memory, or the hit whose span it is).
    pub id: MemoryId,
    /// The precision it is served at.
    pub precision: Precision,
    /// Its text at that precision.
    pub text: String,
    /// Its relevance score from retrieval.
    pub score: f32,
}

/// An assembled context.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Context {
    /// The rendered context, what the tokens were counted on.
    pub text: String,
    /// Tokens in `text`, never more than the budget.
    pub tokens: usize,
    /// Its memories, most relevant first.
    pub blocks: Vec<Block>,
    /// Memories that did not fit even at brief precision.
    pub dropped: Vec<MemoryId>,
}

/// A memory offered to the assembly, in relevance order.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The memory.
    pub id: MemoryId,
    /// Its relevance score.
    pub score: f32,
    /// Key reference (true) or general.
    pub key: bool,
    /// The precision it starts at.
    pub start: Precision,
    /// Its texts at brief, concise and original precision.
    pub texts: [String; 3],
}

/// Renders the blocks: a header line per label, then one `[id] text` line per memory.
fn render(candidates: &[Candidate], levels: &[Option<Precision>]) -> String {
    let mut out = String::new();
    for (key, label) in [(true, KEY_REFERENCE), (false, GENERAL_REFERENCE)] {
        let mut header = false;
        for (c, level) in candidates.iter().zip(levels) {
            let Some(p) = level else { continue };
            if c.key != key {
                continue;
            }
            if !header {
                out.push_str(label);
                out.push_str(":\n");
                header = true;
            }
            out.push_str(&format!("[{}] {}\n", c.id, c.texts[*p as usize]));
        }
    }
    out
}

/// Assembles `candidates` (most relevant first) into at most `budget` tokens by `count`.
pub fn assemble(candidates: &[Candidate], budget: usize, count: &dyn Fn(&str) -> usize) -> Context {
    let mut levels: Vec<Option<Precision>> = candidates.iter().map(|c| Some(c.start)).collect();
    let fits = |levels: &[Option<Precision>]| count(&render(candidates, levels)) <= budget;
    // Downgrade from the least relevant upward, then drop.
    while !fits(&levels) {
        if let Some(i) = (0..levels.len())
            .rev()
            .find(|&i| levels[i].is_some_and(|p| p > Precision::Brief))
        {
            levels[i] = levels[i].map(Precision::down);
        } else if let Some(i) = (0..levels.len()).rev().find(|&i| levels[i].is_some()) {
            levels[i] = None;
        } else {
            break;
        }
    }
    // Give room back: dropped memories at brief, then precision, most relevant first.
    for i in 0..levels.len() {
        if levels[i].is_none() {
            levels[i] = Some(Precision::Brief);
            if !fits(&levels) {
                levels[i] = None;
            }
        }
    }
    for i in 0..levels.len() {
        while let Some(p) = levels[i].filter(|&p| p < candidates[i].start) {
            levels[i] = Some(p.up());
            if !fits(&levels) {
                levels[i] = Some(p);
                break;
            }
        }
    }
    let text = render(candidates, &levels);
    let tokens = count(&text);
    let mut blocks = Vec::new();
    let mut dropped = Vec::new();
    for (c, level) in candidates.iter().zip(&levels) {
        match level {
            Some(p) => blocks.push(Block {
                label: if c.key {
                    KEY_REFERENCE
                } else {
                    GENERAL_REFERENCE
                },
                id: c.id,
                precision: *p,
                text: c.texts[*p as usize].clone(),
                score: c.score,
            }),
            None => dropped.push(c.id),
        }
    }
    // Key references first, then general ones, each in relevance order, as rendered.
    blocks.sort_by_key(|b| b.label != KEY_REFERENCE);
    Context {
        text,
        tokens,
        blocks,
        dropped,
    }
}

#[cfg(test)]
mod tests;
