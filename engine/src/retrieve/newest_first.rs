//! The newest value of a fact first: among the ranked memories, those that state the same fact
//! with different values ("Alice lives in Paris", valid from 2020; "Alice lives in Berlin",
//! valid from 2024), each valid at the time the query asks about (now, or its `as_of`), are
//! re-ordered so that the one whose validity began last takes the best place any of them had;
//! the others keep their order behind it, each one of the group's places further down. Nothing
//! is dropped or closed, and an as-of query, which admits only what was valid at its time,
//! still answers for its date.
//!
//! Two memories state the same fact with different values when both are facts, triples or
//! chunks of the same namespace and user and
//! - both carry triples with the same head and relation and another tail, or
//! - their words are the same but for a changed value ([`changed_value`]): the same first two
//!   words or more (the subject and its predicate), and one to four words of each left over
//!   past the words they share.
//!
//! A query that names a word one of the two holds and the other does not ("what is memory 17
//! about?", "does Alice live in Paris?") asks about that value: those two keep their places.
//!
//! A pure step over the ranked pool; [`super::recall`] calls it, for a query that names no time
//! window (after the boost of one that asks when), before the pool is cut to `k`.

use rustc_hash::FxHashSet;

use crate::clock::Timestamp;
use crate::item::{Kind, MemoryItem, Triple};
use crate::vocabulary::{Cue, Hit, NewestFirst};

use super::cue_step::{Asked, CueStep};
use super::time_cues::{word_iter, words};

/// Most words of either text left over past the words two values of one fact share.
const MAX_CHANGED_WORDS: usize = 4;
/// Words two values of one fact share at their start, at least: a subject and its predicate.
const MIN_SHARED_PREFIX: usize = 2;
/// Longest text read as one fact, in words (a longer chunk states more than one thing).
const MAX_FACT_WORDS: usize = 64;

/// Re-orders `hits` (ranked, best first) so that within every group of memories stating the
/// same fact with different values, each valid at `reference`, the newest value takes the
/// group's best place and the others follow in their own order, one place down each (a
/// version closed before `reference`, shown as history, keeps its own place). Each moved hit
/// takes its new place's score and says whose place it took ([`NewestFirst`]).
pub(crate) fn newest_first(hits: &mut [Hit], reference: Timestamp, query: &str) {
    let asked: FxHashSet<String> = words(query).into_iter().collect();
    let eligible: Vec<usize> = (0..hits.len())
        .filter(|&i| {
            let m = &hits[i].item;
            holds_a_value(m.kind) && m.valid_at(reference)
        })
        .collect();
    if eligible.len() < 2 {
        return;
    }
    // Each text read once, and no further than a fact can run (a long chunk costs no more).
    let tokens: Vec<Option<Vec<String>>> = eligible
        .iter()
        .map(|&i| fact_words(&hits[i].item.text))
        .collect();
    // Groups by union-find over the eligible hits.
    let mut parent: Vec<usize> = (0..eligible.len()).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for a in 0..eligible.len() {
        for b in a + 1..eligible.len() {
            let (x, y) = (&hits[eligible[a]].item, &hits[eligible[b]].item);
            let (wa, wb) = (tokens[a].as_deref(), tokens[b].as_deref());
            if same_fact_other_value(x, y, wa, wb) && !names_a_value(&asked, x, y, wa, wb) {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); eligible.len()];
    for (a, &hit) in eligible.iter().enumerate() {
        let r = root(&mut parent, a);
        groups[r].push(hit);
    }
    for places in groups.into_iter().filter(|g| g.len() > 1) {
        // `places` is in rank order (eligible is). The newest member (the first of them by
        // rank when several began together) takes the first place; the others follow it in
        // their own order, each one place down, so an older value the query matched best
        // stays right behind the current one.
        let newest = (0..places.len())
            .min_by(|&a, &b| {
                let from = |i: usize| hits[places[i]].item.valid_from;
                from(b).cmp(&from(a)).then(a.cmp(&b))
            })
            .expect("a group has members");
        if newest == 0 {
            continue;
        }
        // The group's places up to the newest's turn one step: the newest into the first,
        // each one before it a place down.
        let before: Vec<Hit> = places[..=newest].iter().map(|&i| hits[i].clone()).collect();
        for slot in 0..=newest {
            let mut moved = before[if slot == 0 { newest } else { slot - 1 }].clone();
            moved.score = before[slot].score;
            moved.explain.newest_first = Some(NewestFirst {
                place_of: before[slot].item.id,
                newer: moved.item.valid_from > before[slot].item.valid_from,
            });
            hits[places[slot]] = moved;
        }
    }
}

/// Kinds that state something that may later hold another value: a fact, a triple, or a
/// plain chunk (what `remember` stores by default). Turns, summaries, tasks and the rest are
/// events or digests: two of them that differ in a word both stay where they rank.
fn holds_a_value(kind: Kind) -> bool {
    matches!(kind, Kind::Fact | Kind::Triple | Kind::Chunk)
}

/// True when `a` and `b` (their words `wa`, `wb`) state the same fact with different values.
fn same_fact_other_value(
    a: &MemoryItem,
    b: &MemoryItem,
    wa: Option<&[String]>,
    wb: Option<&[String]>,
) -> bool {
    if a.namespace != b.namespace || a.user != b.user {
        return false;
    }
    other_value((a.triple.as_ref(), wa), (b.triple.as_ref(), wb))
}

/// True when two statements, each its triple (if any) and its words (`None`: too long to be
/// one fact), say the same fact with another value: triples with the same head and relation
/// and another tail; else words with a [`changed_value`].
fn other_value(
    (ta, wa): (Option<&Triple>, Option<&[String]>),
    (tb, wb): (Option<&Triple>, Option<&[String]>),
) -> bool {
    if let (Some(x), Some(y)) = (ta, tb) {
        let same = |p: &str, q: &str| p.trim().eq_ignore_ascii_case(q.trim());
        return same(&x.head, &y.head) && same(&x.relation, &y.relation) && !same(&x.tail, &y.tail);
    }
    wa.zip(wb).is_some_and(|(wa, wb)| changed_value(wa, wb))
}

/// True when a new triple states the same fact as `stored`'s triple with another value: the
/// same head and relation (case and surrounding spaces aside), another tail. Only triples
/// name their subject and predicate; two texts that differ in a word ("the user likes tea" /
/// "the user likes jazz") may both hold, and [`newest_first`] only orders them.
pub(crate) fn states_another_value(triple: &Triple, stored: &MemoryItem) -> bool {
    stored
        .triple
        .as_ref()
        .is_some_and(|t| other_value((Some(triple), None), (Some(t), None)))
}

/// The key under which a triple meets another value of its fact: its head and relation.
pub(crate) fn fact_key(triple: &Triple) -> String {
    let norm = |s: &str| s.trim().to_lowercase();
    format!("{}\u{0}{}", norm(&triple.head), norm(&triple.relation))
}

/// True when the query's words (`asked`) name a word that one of `a` and `b` (their words
/// `wa`, `wb`) holds and the other does not: a question about that value ("what is memory
/// 17 about?", "does Alice live in Paris?"), which the newer value does not answer better.
fn names_a_value(
    asked: &FxHashSet<String>,
    a: &MemoryItem,
    b: &MemoryItem,
    wa: Option<&[String]>,
    wb: Option<&[String]>,
) -> bool {
    let differ = |wa: &[String], wb: &[String]| {
        let (sa, sb): (FxHashSet<&String>, FxHashSet<&String>) =
            (wa.iter().collect(), wb.iter().collect());
        sa.symmetric_difference(&sb).any(|w| asked.contains(*w))
    };
    match (&a.triple, &b.triple) {
        (Some(x), Some(y)) => differ(&words(&x.tail), &words(&y.tail)),
        _ => wa.zip(wb).is_some_and(|(wa, wb)| differ(wa, wb)),
    }
}

/// True when word lists `a` and `b` say the same thing with another value: at least
/// [`MIN_SHARED_PREFIX`] words shared at the start (a subject and its predicate), and, past the
/// words the two have in common (their longest common subsequence), 1 to
/// [`MAX_CHANGED_WORDS`] words of each left over: a value changed (or two), not one only added
/// or removed. Texts of more than [`MAX_FACT_WORDS`] words are not read as one fact.
pub(crate) fn changed_value(a: &[String], b: &[String]) -> bool {
    if a.len() > MAX_FACT_WORDS || b.len() > MAX_FACT_WORDS {
        return false;
    }
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if prefix < MIN_SHARED_PREFIX {
        return false;
    }
    let common = common_subsequence(&a[prefix..], &b[prefix..]) + prefix;
    let (da, db) = (a.len() - common, b.len() - common);
    (1..=MAX_CHANGED_WORDS).contains(&da) && (1..=MAX_CHANGED_WORDS).contains(&db)
}

/// The words of `text` (as [`words`] reads them), or `None` past [`MAX_FACT_WORDS`] of them:
/// reading stops there.
fn fact_words(text: &str) -> Option<Vec<String>> {
    let w: Vec<String> = word_iter(text).take(MAX_FACT_WORDS + 1).collect();
    (w.len() <= MAX_FACT_WORDS).then_some(w)
}

/// The length of the longest common subsequence of `a` and `b` (one row of the table).
fn common_subsequence(a: &[String], b: &[String]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The newest-first step, for a query that names no time window: a query naming one is about
/// that time (the time boost orders); one about now (or its as-of), asking when or not, ranks
/// the newest value of a fact first.
pub(super) struct NewestFirstStep;

impl CueStep for NewestFirstStep {
    fn cue(&self) -> Cue {
        Cue::NewestFirst
    }

    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]) {
        if asked.time.window.is_none() {
            newest_first(hits, asked.reference, asked.text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::MemoryId;
    use crate::item::NewMemory;
    use crate::vocabulary::Explanation;

    fn w(s: &str) -> Vec<String> {
        words(s)
    }

    #[test]
    fn a_changed_value_is_told_from_another_fact() {
        let same = [
            ("Alice lives in Paris", "Alice lives in Berlin"),
            ("Alice has 3 cats", "Alice has 4 cats"),
            (
                "My favourite colour is blue.",
                "My favourite colour is dark green.",
            ),
            (
                "Bob's phone number is 555-0101",
                "Bob's phone number is 555-0199",
            ),
            (
                "The meeting is on Tuesday at 10",
                "The meeting is on Friday at 10",
            ),
            (
                "Alice lives in Paris since 2020",
                "Alice lives in Berlin since 2024",
            ),
            (
                "I drink tea every morning",
                "I drink black coffee every morning",
            ),
        ];
        for (a, b) in same {
            assert!(changed_value(&w(a), &w(b)), "{a} / {b}");
            assert!(changed_value(&w(b), &w(a)), "{b} / {a}");
        }
        let other = [
            // Another subject, another predicate: not the same fact.
            ("Alice lives in Paris", "Bob lives in Paris"),
            ("Alice lives in Paris", "Alice works in Paris"),
            ("The meeting is on Tuesday", "The party is on Tuesday"),
            // Something added, not changed.
            ("Alice lives in Paris", "Alice lives in Paris, France"),
            // The same words.
            ("Alice lives in Paris", "alice lives in paris."),
            // Too much changed.
            (
                "Alice lives in Paris",
                "Alice lives in a small flat above the bakery near the station",
            ),
            ("Alice", "Bob"),
            ("", "Alice lives in Paris"),
        ];
        for (a, b) in other {
            assert!(!changed_value(&w(a), &w(b)), "{a} / {b}");
            assert!(!changed_value(&w(b), &w(a)), "{b} / {a}");
        }
    }

    fn hit(id: u64, text: &str, kind: Kind, valid_from: Timestamp, score: f32) -> Hit {
        let mut item = NewMemory::new(text)
            .kind(kind)
            .into_item(MemoryId::new(id), valid_from);
        item.valid_from = valid_from;
        Hit {
            item,
            score,
            rank: 0,
            explain: Explanation::default(),
        }
    }

    #[test]
    fn the_newest_value_takes_the_best_place_of_its_group() {
        let mut hits = vec![
            hit(1, "Alice lives in Paris", Kind::Fact, 2020, 0.9),
            hit(7, "Lunch is at noon", Kind::Fact, 2019, 0.8),
            hit(2, "Alice lives in Berlin", Kind::Fact, 2024, 0.7),
            hit(3, "Alice lives in Rome", Kind::Fact, 2022, 0.6),
        ];
        newest_first(&mut hits, 2030, "where does Alice live?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id.get()).collect();
        assert_eq!(
            ids,
            [2, 7, 1, 3],
            "the newest first, then the others in their order"
        );
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        assert_eq!(scores, [0.9, 0.8, 0.7, 0.6], "scores stay in rank order");
        let berlin = hits[0].explain.newest_first.as_ref().unwrap();
        assert_eq!((berlin.place_of, berlin.newer), (MemoryId::new(1), true));
        let paris = hits[2].explain.newest_first.as_ref().unwrap();
        assert_eq!((paris.place_of, paris.newer), (MemoryId::new(2), false));
        assert!(hits[1].explain.newest_first.is_none());
        assert!(
            hits[3].explain.newest_first.is_none(),
            "Rome kept its place"
        );

        // Asked about 2023: Berlin's value had not begun, Rome's had.
        let mut hits = vec![
            hit(1, "Alice lives in Paris", Kind::Fact, 2020, 0.9),
            hit(2, "Alice lives in Berlin", Kind::Fact, 2024, 0.7),
            hit(3, "Alice lives in Rome", Kind::Fact, 2022, 0.6),
        ];
        newest_first(&mut hits, 2023, "where does Alice live?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id.get()).collect();
        assert_eq!(ids, [3, 2, 1]);
    }

    #[test]
    fn other_users_kinds_and_equal_times_keep_their_places() {
        let mut other_user = hit(2, "Alice lives in Berlin", Kind::Fact, 2024, 0.7);
        other_user.item.user = Some("bob".into());
        let cases = [
            other_user,
            hit(2, "Alice lives in Berlin", Kind::Turn, 2024, 0.7),
            hit(2, "Alice lives in Berlin", Kind::Fact, 2020, 0.7),
        ];
        for second in cases {
            let mut hits = vec![
                hit(1, "Alice lives in Paris", Kind::Fact, 2020, 0.9),
                second,
            ];
            let before = hits.clone();
            newest_first(&mut hits, 2030, "where does Alice live?");
            assert_eq!(hits, before);
        }
    }

    #[test]
    fn a_query_naming_a_value_keeps_the_places() {
        let hits = || {
            vec![
                hit(
                    1,
                    "checked memory number 17 about topic 119",
                    Kind::Chunk,
                    1,
                    0.9,
                ),
                hit(
                    2,
                    "checked memory number 48 about topic 336",
                    Kind::Chunk,
                    2,
                    0.7,
                ),
            ]
        };
        for query in ["checked memory number 17", "does Alice live in topic 119?"] {
            let mut h = hits();
            newest_first(&mut h, 2030, query);
            assert_eq!(h, hits(), "{query}");
        }
        let mut h = hits();
        newest_first(&mut h, 2030, "what is the checked memory about?");
        assert_eq!(h[0].item.id, MemoryId::new(2));
    }

    #[test]
    fn triples_compare_head_and_relation() {
        let triple = |id, tail: &str, from| {
            let mut h = hit(
                id,
                &format!("Alice lives in {tail}"),
                Kind::Triple,
                from,
                0.5,
            );
            h.item.triple = Some(crate::item::Triple {
                head: "Alice".into(),
                relation: "lives in".into(),
                tail: tail.into(),
            });
            h
        };
        let mut hits = vec![triple(1, "Paris", 2020), triple(2, "the capital", 2024)];
        newest_first(&mut hits, 2030, "where does Alice live?");
        assert_eq!(hits[0].item.id, MemoryId::new(2));
    }
}
