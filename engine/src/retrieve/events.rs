//! What the asker did, without a model: a question of its asker's about their own life ("what
//! did I buy?", "how many events did I attend?", "where do I keep my old sneakers?") is
//! answered by what they said they did ("I've finished five issues", "I just bought a smoker",
//! "I went to the farmers' market"), while the same conversations' other turns ask for help
//! ("can you recommend …?", "I'm thinking of getting …") and share as many of its words. Such a
//! memory is told by "I" and, at most two words on ("'ve", "just", "finally" …), a verb's past
//! form; for a query in the first person its score is raised by a tenth, explained in
//! `explain.event`. A query about another person ("what did Caroline paint?"), or asking how a
//! thing is done ("how do I reset my router?"), is left alone.
//!
//! A pure step over the ranked pool; [`super::recall`] calls it before the cut to `k`.

use crate::vocabulary::{EventMatch, Hit};

use super::cue_step::{Asked, CueStep};
use super::preferences::{fraction, raise_stating, FIRST_PERSON};
use super::time_cues::word_iter;
use crate::vocabulary::Cue;

/// The fraction an event's score is raised by, for a query in the first person (measured on
/// LongMemEval-S dev, docs/bench-log/2026-11.md: 0.05 to 0.4 all raise ndcg_any@10, 0.1 the
/// most and with the best recall).
pub(crate) const EVENT_BOOST: f32 = 0.1;
/// Words of a query read for a first-person word, at most.
const MAX_QUERY_WORDS: usize = 64;
/// Words of a memory read for an event, at most.
const MAX_WORDS: usize = 400;

/// Words that may stand between "I" and the verb ("I've", "I just", "I finally").
const BETWEEN: [&str; 9] = [
    "ve", "have", "just", "recently", "finally", "also", "even", "already", "actually",
];

/// Irregular (and a few regular but common) past forms of the verbs people tell their days by.
const PAST: [&str; 40] = [
    "got",
    "bought",
    "went",
    "made",
    "saw",
    "did",
    "had",
    "took",
    "met",
    "ran",
    "began",
    "started",
    "finished",
    "found",
    "gave",
    "sent",
    "told",
    "wrote",
    "read",
    "won",
    "lost",
    "left",
    "spent",
    "paid",
    "sold",
    "tried",
    "visited",
    "attended",
    "moved",
    "joined",
    "completed",
    "received",
    "watched",
    "cooked",
    "baked",
    "booked",
    "signed",
    "adopted",
    "picked",
    "upgraded",
];

/// Words ending in "ed" after "I" that say a state, not a deed ("I'm interested" is read as
/// "i", "m", …; these come straight after "I" too: "I used to", "I wondered").
const NOT_DEEDS: [&str; 6] = [
    "need",
    "used",
    "interested",
    "wondered",
    "excited",
    "concerned",
];

/// The words by which `text` says what its speaker did, if it does: "I" and, at most two of
/// [`BETWEEN`] on, a past form ("i just bought", "i ve finished", "i attended").
pub(crate) fn states_event(text: &str) -> Option<String> {
    said_by_speaker(text, |verb| {
        PAST.contains(&verb)
            || (verb.ends_with("ed") && verb.len() > 4 && !NOT_DEEDS.contains(&verb))
    })
}

/// The words of `text` from an "I" to a verb `is_verb` accepts, at most two of [`BETWEEN`]
/// between ("i ve bought", "i even got"), if it has them.
pub(super) fn said_by_speaker(text: &str, is_verb: impl Fn(&str) -> bool) -> Option<String> {
    let w: Vec<String> = word_iter(text).take(MAX_WORDS).collect();
    let at = |i: usize| w.get(i).map(String::as_str).unwrap_or("");
    (0..w.len()).find_map(|i| {
        if at(i) != "i" {
            return None;
        }
        let mut j = i + 1;
        while j < i + 3 && BETWEEN.contains(&at(j)) {
            j += 1;
        }
        is_verb(at(j)).then(|| w[i..=j].join(" "))
    })
}

/// The `event` cue ([`boost_events`]).
pub(super) struct Events;

impl CueStep for Events {
    fn cue(&self) -> Cue {
        Cue::Event
    }

    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]) {
        boost_events(hits, asked.text);
    }
}

/// Raises by [`EVENT_BOOST`], for a query in the first person that does not ask how a thing is
/// done, the score of each hit that says what its speaker did (explained in `explain.event`),
/// and re-orders.
fn boost_events(hits: &mut [Hit], query: &str) {
    let w: Vec<String> = word_iter(query).take(MAX_QUERY_WORDS).collect();
    let mine = w.iter().any(|x| FIRST_PERSON.contains(&x.as_str()));
    // "How do I reset my router?" asks how a thing is done, not what its asker did.
    let how_to = w.windows(3).any(|p| {
        p[0] == "how" && ["do", "can", "should", "could"].contains(&p[1].as_str()) && p[2] == "i"
    }) || w.windows(2).any(|p| p[0] == "how" && p[1] == "to");
    if !mine || how_to {
        return;
    }
    raise_stating(
        hits,
        fraction(EVENT_BOOST),
        states_event,
        |e, said, boost| e.event = Some(EventMatch { cue: said, boost }),
    );
}

#[cfg(test)]
mod tests {
    use super::super::test_hit as hit;
    use super::*;
    use crate::item::MemoryId;

    #[test]
    fn a_deed_of_the_speaker_is_told() {
        for (t, said) in [
            (
                "I've finished five issues of National Geographic",
                "i ve finished",
            ),
            ("By the way, I just bought a smoker", "i just bought"),
            ("I attended the Sundance festival", "i attended"),
            ("Last week I repotted my spider plant", "i repotted"),
        ] {
            assert_eq!(states_event(t).as_deref(), Some(said), "{t}");
        }
        for t in [
            "Can you recommend some documentaries?",
            "I'm thinking of getting a new lens",
            "I need ideas for dinner",
            "I used to run every day",
            "She went to the market",
            "",
        ] {
            assert_eq!(states_event(t), None, "{t}");
        }
    }

    #[test]
    fn a_deed_rises_for_a_question_of_its_askers() {
        let pool = || {
            vec![
                hit(1, "Can you recommend magazines about nature?", 1.0),
                hit(2, "I've finished five issues of National Geographic", 0.95),
            ]
        };
        let mut hits = pool();
        boost_events(&mut hits, "How many issues have I finished reading?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id.get()).collect();
        assert_eq!(ids, [2, 1]);
        assert!((hits[0].score - 0.95 * 1.1).abs() < 1e-6);
        let e = hits[0].explain.event.as_ref().unwrap();
        assert_eq!((e.cue.as_str(), e.boost), ("i ve finished", EVENT_BOOST));
        assert!(hits[1].explain.event.is_none());
        // A question about another person, or asking how a thing is done, leaves them alone.
        for q in [
            "How many issues has Melanie read?",
            "How do I renew my magazine subscription?",
            "how to subscribe to my favourite magazine",
        ] {
            let mut hits = pool();
            boost_events(&mut hits, q);
            assert_eq!(hits[0].item.id, MemoryId::new(1), "{q}");
            assert!(hits.iter().all(|h| h.explain.event.is_none()), "{q}");
        }
    }
}
