//! What de-duplication may do with a new memory, and what `remember` reports it did.
//!
//! The rule is that no information is ever dropped:
//! - an exact duplicate (same namespace, kind and text) merges into the stored memory;
//! - a near-duplicate (cosine at or above `Options::dedup_threshold`) merges only when its
//!   whole text says the same thing as the stored one: equal once case, spacing and
//!   punctuation are ignored ([`same_information`]). Every letter and digit is compared, so a
//!   different number, date or name, or a different ending past the embedder's 256 tokens, is
//!   never "near";
//! - otherwise a near-duplicate of a kind with one current truth (facts and triples,
//!   [`one_current_truth`]) becomes a new version that supersedes the stored one: history
//!   kept, the new text current. Other kinds keep both memories, and so does a fact whose
//!   validity began before the stored one's (an earlier value told late): recall then ranks
//!   the value whose validity began last first (`retrieve::newest_first`);
//! - a triple with no near duplicate that has the same head and relation as a current triple
//!   of its place and another tail (`retrieve::states_another_value`: Hank lives in Madrid
//!   after Hank lives in Lisbon) is decided on as such a near duplicate: it supersedes it,
//!   closing its validity, or stands beside it when told late.

use crate::item::{Kind, MemoryId};

/// What [`crate::Memory::remember_explained`] did with one memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remembered {
    /// The memory that now holds the text: a new id, the id merged into, or the new version.
    pub id: MemoryId,
    /// How it got there.
    pub action: RememberAction,
}

/// How a remembered text was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RememberAction {
    /// Stored as a new memory.
    New,
    /// Merged into an existing memory that says the same (exactly, or up to case, spacing and
    /// punctuation): its count grows, its metadata takes the newest values.
    Merged,
    /// Stored as a new version of a near-duplicate fact or triple that said something else;
    /// `previous` is kept, superseded by `id`.
    Superseded {
        /// The version it replaced.
        previous: MemoryId,
    },
}

/// What a remember serialises as, flat, as every door shows it:
/// `{"id": N, "action": "new" | "merged" | "superseded", "previous": M | null}`. One definition
/// gives both its JSON and its JSON schema.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "Remembered")]
struct RememberedShape {
    /// The memory that now holds the text.
    id: MemoryId,
    /// How it got there.
    action: ActionName,
    /// The version a supersession replaced (`null` otherwise).
    previous: Option<MemoryId>,
}

/// How a text was stored, by name.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ActionName {
    /// A new memory.
    New,
    /// Merged into a memory that says the same.
    Merged,
    /// A new version of a fact, the old one kept as history.
    Superseded,
}

impl From<&Remembered> for RememberedShape {
    fn from(r: &Remembered) -> Self {
        let action = match r.action {
            RememberAction::New => ActionName::New,
            RememberAction::Merged => ActionName::Merged,
            RememberAction::Superseded { .. } => ActionName::Superseded,
        };
        RememberedShape {
            id: r.id,
            action,
            previous: r.action.previous(),
        }
    }
}

impl serde::Serialize for Remembered {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RememberedShape::from(self).serialize(s)
    }
}

impl schemars::JsonSchema for Remembered {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        RememberedShape::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        RememberedShape::json_schema(generator)
    }
}

impl RememberAction {
    /// The version a supersession replaced.
    pub fn previous(&self) -> Option<MemoryId> {
        match self {
            RememberAction::Superseded { previous } => Some(*previous),
            _ => None,
        }
    }

    /// `new`, `merged` or `superseded`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RememberAction::New => "new",
            RememberAction::Merged => "merged",
            RememberAction::Superseded { .. } => "superseded",
        }
    }
}

/// How far de-duplication reaches for one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Merging {
    /// Exact duplicates merge, and near duplicates at or above `Options::dedup_threshold`
    /// are weighed by [`Dedup::decide`] (what `remember` does).
    Near,
    /// Only exact duplicates merge: tasks with other outcomes or steps, or a document's
    /// overlapping chunks, stay apart however similar they read.
    ExactOnly,
}

impl Merging {
    /// The cosine at or above which a stored memory is a near duplicate; `None`: none is.
    pub(crate) fn threshold(self, dedup_threshold: Option<f32>) -> Option<f32> {
        match self {
            Merging::Near => dedup_threshold,
            Merging::ExactOnly => None,
        }
    }
}

/// The memory a new one may merge into, found by the screen: one with the same content hash,
/// or the closest near duplicate of its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The stored (or earlier in the batch) memory.
    pub(crate) id: MemoryId,
    /// Same content hash: the same namespace, kind and text.
    pub(crate) exact: bool,
}

/// What de-duplication decides for one new memory, before anything is written: the whole
/// rule "no information is ever dropped" in one pure step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dedup {
    /// Nothing close says the same: stored as a new memory.
    New,
    /// `into` says the same: the new memory merges into it.
    Merge {
        /// The memory it merges into.
        into: MemoryId,
    },
    /// `previous`, a near duplicate of a kind with one current truth, says something else:
    /// the new memory is stored as its new version, `previous` kept as history.
    Supersede {
        /// The version it replaces.
        previous: MemoryId,
    },
    /// `near`, a near duplicate of another kind, says something else: both stay current.
    Beside {
        /// The near duplicate it stands beside.
        near: MemoryId,
    },
}

impl Dedup {
    /// Decides for a new memory of `kind` and text `text`, given the screen's `candidate`
    /// and, when there is one, the candidate's text and whether the new memory's validity
    /// begins before the candidate's (an earlier value told late: it stands beside the
    /// current one instead of replacing it, and recall ranks the value that began last first).
    pub(crate) fn decide(
        kind: Kind,
        text: &str,
        candidate: Option<(Candidate, &str, bool)>,
    ) -> Dedup {
        match candidate {
            None => Dedup::New,
            Some((c, stored, _)) if c.exact || same_information(stored, text) => {
                Dedup::Merge { into: c.id }
            }
            Some((c, _, told_late)) if one_current_truth(kind) && !told_late => {
                Dedup::Supersede { previous: c.id }
            }
            Some((c, _, _)) => Dedup::Beside { near: c.id },
        }
    }
}

/// Kinds whose near-duplicates are looked for: every kind but turns. A turn is an event, not
/// a statement: only its exact self (the same words at the same place of the same session)
/// merges.
pub fn merges_near_duplicates(kind: Kind) -> bool {
    kind != Kind::Turn
}

/// Kinds that hold one current truth: a near-duplicate that says something else replaces the
/// stored version (keeping it as history) instead of standing beside it.
pub fn one_current_truth(kind: Kind) -> bool {
    matches!(kind, Kind::Fact | Kind::Triple)
}

/// True when `a` and `b` say the same thing: the same letters, digits and symbols in the same
/// words, ignoring case, spacing and punctuation. Compares the whole texts. Signs, comparison
/// operators, currency and unit symbols are information, not punctuation: "-18 degrees" is
/// not "18 degrees", "load > 90" is not "load < 90".
pub fn same_information(a: &str, b: &str) -> bool {
    normalized(a).eq(normalized(b))
}

/// Punctuation that separates words and says nothing by itself.
fn is_punctuation(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '.' | ','
                | ';'
                | ':'
                | '!'
                | '?'
                | '\''
                | '"'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '_'
                | '\u{2018}'
                | '\u{2019}'
                | '\u{201c}'
                | '\u{201d}'
                | '\u{2026}'
                | '\u{2014}'
        )
}

/// The words of `text`, lower case, one space between them: runs of letters and digits, and
/// each other character that is not punctuation (a sign, an operator, a symbol) on its own.
fn normalized(text: &str) -> impl Iterator<Item = char> + '_ {
    let mut words: Vec<&str> = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            words.push(&text[s..i]);
        }
        if !is_punctuation(c) {
            words.push(&text[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    words.into_iter().enumerate().flat_map(|(i, w)| {
        let space = (i > 0).then_some(' ');
        space
            .into_iter()
            .chain(w.chars().flat_map(char::to_lowercase))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_case_spacing_and_punctuation_are_ignored() {
        assert!(same_information(
            "The staging database listens on port 5432.",
            "the staging  database listens on port 5432"
        ));
        assert!(!same_information(
            "The staging database listens on port 5432.",
            "The staging database listens on port 5433."
        ));
        assert!(!same_information(
            "Meeting on Monday.",
            "Meeting on Tuesday."
        ));
        assert!(!same_information("Alice met Bob.", "Alice met Rob."));
        assert!(!same_information("5,432 users", "5432 users"));
        let long = "word ".repeat(400);
        assert!(!same_information(
            &format!("{long} end A"),
            &format!("{long} end B")
        ));
        assert!(same_information("Ünïcode ÉCOLE", "ünïcode école"));
        assert!(same_information("", "  ...  "));
    }

    #[test]
    fn signs_operators_and_symbols_are_information() {
        let base = "The freezer in room 204 must be kept at 18 degrees Celsius.";
        assert!(!same_information(base, &base.replace("18", "-18")));
        assert!(!same_information(base, &base.replace("18", "\u{2212}18")));
        assert!(!same_information(
            "Net profit was 2.5 million euros.",
            "Net profit was -2.5 million euros."
        ));
        assert!(!same_information(
            "Page when CPU load > 90 percent.",
            "Page when CPU load < 90 percent."
        ));
        assert!(!same_information("It costs $5.", "It costs \u{20ac}5."));
        assert!(!same_information("Grade A+", "Grade A-"));
        assert!(!same_information("x >= 3", "x > 3"));
        assert!(!same_information("30 \u{b0}C", "30 C"));
        // Spacing around a symbol is still only spacing.
        assert!(same_information(
            "kept at -18 degrees",
            "Kept at - 18 degrees."
        ));
        assert!(same_information(
            "\"Hello,\" she said (twice).",
            "hello she said twice"
        ));
    }

    #[test]
    fn facts_and_triples_have_one_current_truth() {
        assert!(one_current_truth(Kind::Fact) && one_current_truth(Kind::Triple));
        assert!(!one_current_truth(Kind::Chunk) && !one_current_truth(Kind::Task));
    }

    #[test]
    fn the_decision_never_drops_information() {
        let near = |id| Candidate { id, exact: false };
        let exact = |id| Candidate { id, exact: true };
        let text = "The staging database listens on port 5432.";
        assert_eq!(Dedup::decide(Kind::Fact, text, None), Dedup::New);
        // An exact duplicate merges whatever the kind; a near one only when it says the same.
        assert_eq!(
            Dedup::decide(
                Kind::Turn,
                text,
                Some((exact(MemoryId::new(7)), text, false))
            ),
            Dedup::Merge {
                into: MemoryId::new(7)
            }
        );
        assert_eq!(
            Dedup::decide(
                Kind::Fact,
                text,
                Some((
                    near(MemoryId::new(7)),
                    "the staging database listens on port 5432",
                    false
                ))
            ),
            Dedup::Merge {
                into: MemoryId::new(7)
            }
        );
        let other = "The staging database listens on port 5433.";
        assert_eq!(
            Dedup::decide(
                Kind::Fact,
                text,
                Some((near(MemoryId::new(7)), other, false))
            ),
            Dedup::Supersede {
                previous: MemoryId::new(7)
            }
        );
        assert_eq!(
            Dedup::decide(
                Kind::Triple,
                text,
                Some((near(MemoryId::new(7)), other, false))
            ),
            Dedup::Supersede {
                previous: MemoryId::new(7)
            }
        );
        assert_eq!(
            Dedup::decide(
                Kind::Chunk,
                text,
                Some((near(MemoryId::new(7)), other, false))
            ),
            Dedup::Beside {
                near: MemoryId::new(7)
            }
        );
        // An earlier value told late stands beside the current one.
        assert_eq!(
            Dedup::decide(
                Kind::Fact,
                text,
                Some((near(MemoryId::new(7)), other, true))
            ),
            Dedup::Beside {
                near: MemoryId::new(7)
            }
        );
    }

    #[test]
    fn exact_only_merging_has_no_threshold() {
        assert_eq!(Merging::Near.threshold(Some(0.9)), Some(0.9));
        assert_eq!(Merging::ExactOnly.threshold(Some(0.9)), None);
        assert_eq!(Merging::Near.threshold(None), None);
    }
}
