//! Preferences and habits, without a model: a query that asks for advice ("can you suggest
//! some accessories for my camera?", "any tips?", "what should I cook this weekend?") is
//! answered well only by what the user said of their own tastes, habits and things ("I prefer
//! winding down by 9:30", "as a Sony camera user", "I've been using basil and mint"). Such a
//! memory is told by its first-person words; for a query asking for advice its score is raised
//! by a fraction, explained in `explain.preference`.
//!
//! A pure step over the ranked pool; [`super::recall`] calls it before the cut to `k`.

use crate::vocabulary::{Explanation, Hit, PreferenceMatch};

use super::best_first;
use super::cue_step::{Asked, CueStep};
use super::time_cues::word_iter;
use crate::vocabulary::Cue;

/// The fraction a preference's score is raised by, for a query asking for advice (measured on
/// LongMemEval-S dev, BENCHMARKS.md).
pub(crate) const PREFERENCE_BOOST: f32 = 0.3;
/// Words of a memory read for a preference, at most.
const MAX_WORDS: usize = 400;

/// Words of a query asking for advice, a suggestion or a choice.
const ADVICE_WORDS: [&str; 14] = [
    "recommend",
    "recommendation",
    "recommendations",
    "suggest",
    "suggestion",
    "suggestions",
    "tips",
    "tip",
    "ideas",
    "idea",
    "advice",
    "advise",
    "recipe",
    "recipes",
];

/// Two-word openings of a query asking what to do ("what should I", "should I try …").
const ADVICE_PAIRS: [(&str, &str); 6] = [
    ("should", "i"),
    ("could", "i"),
    ("can", "i"),
    ("any", "good"),
    ("what", "to"),
    ("how", "about"),
];

/// What the user says after "I" when stating a taste or a habit ("I prefer", "I love",
/// "I usually", "I'm into", "I've been using" …).
const AFTER_I: [&str; 12] = [
    "prefer", "like", "love", "enjoy", "usually", "always", "often", "hate", "avoid", "tend",
    "adore", "dislike",
];

/// Words by which a query speaks of its asker.
pub(super) const FIRST_PERSON: [&str; 5] = ["i", "me", "my", "we", "our"];

/// Whether `query` asks for advice, a suggestion or a choice for its asker ("can you suggest
/// something for my camera?"; not "what did Caroline recommend to Melanie?").
pub(crate) fn asks_advice(query: &str) -> Option<&'static str> {
    let w: Vec<String> = word_iter(query).take(64).collect();
    if !w.iter().any(|x| FIRST_PERSON.contains(&x.as_str())) {
        return None;
    }
    if let Some(word) = ADVICE_WORDS.iter().find(|a| w.iter().any(|x| x == *a)) {
        return Some(word);
    }
    w.windows(2)
        .find_map(|p| ADVICE_PAIRS.iter().find(|(a, b)| p[0] == *a && p[1] == *b))
        .map(|(a, _)| *a)
}

/// The words by which `text` states a taste or a habit of its speaker, if it does.
pub(crate) fn states_preference(text: &str) -> Option<String> {
    let w: Vec<String> = word_iter(text).take(MAX_WORDS).collect();
    for (i, x) in w.iter().enumerate() {
        let next = |k: usize| w.get(i + k).map(String::as_str).unwrap_or("");
        match x.as_str() {
            // "I prefer", "I usually", "I really like".
            "i" if AFTER_I.contains(&next(1)) => return Some(format!("i {}", next(1))),
            "i" if next(1) == "really" && AFTER_I.contains(&next(2)) => {
                return Some(format!("i really {}", next(2)))
            }
            // "I'm into", "I'm a big fan of", "I'm vegetarian".
            "i" if next(1) == "m"
                && ["into", "a", "an", "vegetarian", "vegan"].contains(&next(2)) =>
            {
                if next(2) == "into" || ["fan", "user", "lover", "big", "huge"].contains(&next(3)) {
                    return Some(format!("i'm {} {}", next(2), next(3)).trim().to_string());
                }
                if next(2) == "vegetarian" || next(2) == "vegan" {
                    return Some(format!("i'm {}", next(2)));
                }
            }
            // "I've been using", "I've been into".
            "i" if next(1) == "ve" && next(2) == "been" => {
                let v = next(3);
                if [
                    "using", "into", "loving", "enjoying", "trying", "making", "cooking",
                ]
                .contains(&v)
                {
                    return Some(format!("i've been {v}"));
                }
            }
            // "my favorite", "my favourite", "my go-to".
            "my" if ["favorite", "favourite", "go"].contains(&next(1)) => {
                return Some(format!("my {}", next(1)))
            }
            // "as a Sony camera user", "as a vegetarian".
            "as" if next(1) == "a" || next(1) == "an" => {
                let tail = (2..6).map(next).find(|t| {
                    [
                        "user",
                        "fan",
                        "lover",
                        "vegetarian",
                        "vegan",
                        "beginner",
                        "owner",
                    ]
                    .contains(t)
                });
                if let Some(t) = tail {
                    return Some(format!("as a … {t}"));
                }
            }
            _ => {}
        }
    }
    None
}

/// The `preference` cue ([`boost_preferences`]).
pub(super) struct Preferences;

impl CueStep for Preferences {
    fn cue(&self) -> Cue {
        Cue::Preference
    }

    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]) {
        boost_preferences(hits, asked.text);
    }
}

/// Raises by [`PREFERENCE_BOOST`], for a query asking for advice, the score of each hit that
/// states a preference (explained in `explain.preference`), and re-orders.
fn boost_preferences(hits: &mut [Hit], query: &str) {
    let Some(asked) = asks_advice(query) else {
        return;
    };
    raise_stating(
        hits,
        fraction(PREFERENCE_BOOST),
        states_preference,
        |e, words, boost| {
            e.preference = Some(PreferenceMatch {
                cue: format!("asks {asked:?}; it says {words:?}"),
                boost,
            });
        },
    );
}

/// Raises the score of each hit whose text `states` something by what `raise` makes of its
/// score (the score added, and the boost `mark` explains), explains it with `mark` (what it
/// states, the boost), and re-orders when any rose: the one step the preference and quantity
/// cues share.
pub(super) fn raise_stating(
    hits: &mut [Hit],
    raise: impl Fn(f32) -> (f32, f32),
    states: impl Fn(&str) -> Option<String>,
    mark: impl Fn(&mut Explanation, String, f32),
) {
    let mut any = false;
    for h in hits.iter_mut() {
        if let Some(said) = states(&h.item.text) {
            let (added, boost) = raise(h.score);
            h.score += added;
            mark(&mut h.explain, said, boost);
            any = true;
        }
    }
    if any {
        best_first(hits);
    }
}

/// A raise by `boost`, a fraction of the score itself, for [`raise_stating`].
pub(super) fn fraction(boost: f32) -> impl Fn(f32) -> (f32, f32) {
    move |score| (boost * score.abs(), boost)
}

#[cfg(test)]
mod tests {
    use super::super::test_hit as hit;
    use super::*;
    use crate::item::MemoryId;

    #[test]
    fn advice_is_told_from_other_questions() {
        for q in [
            "Can you suggest some accessories for my camera?",
            "I've been having trouble with my phone's battery. Any tips?",
            "What should I serve for dinner this weekend?",
            "Can you recommend a show for me?",
        ] {
            assert!(asks_advice(q).is_some(), "{q}");
        }
        for q in [
            "Where does Alice live?",
            "How many doctor's appointments did I go to in March?",
            "When did I finish The Nightingale?",
            // Advice between others is a fact to find, not a request.
            "What book did Caroline recommend to Melanie?",
            "What advice does Gina give to Jon?",
        ] {
            assert!(asks_advice(q).is_none(), "{q}");
        }
    }

    #[test]
    fn tastes_and_habits_are_told_from_other_statements() {
        for t in [
            "user: I prefer winding down by 9:30 pm.",
            "As a Sony camera user, I want a better bag.",
            "I've been using basil and mint in my cooking lately.",
            "My favorite cuisine is Thai.",
            "I'm a big fan of jazz.",
            "I usually run in the morning.",
        ] {
            assert!(states_preference(t).is_some(), "{t}");
        }
        for t in [
            "Alice lives in Berlin.",
            "I went to the doctor on March 3rd.",
            "What is the capital of France?",
            "I'm a bit tired today.",
        ] {
            assert!(states_preference(t).is_none(), "{t}");
        }
    }

    #[test]
    fn a_preference_climbs_only_for_advice() {
        let pool = || {
            vec![
                hit(1, "I went to the park.", 1.0),
                hit(2, "I prefer quiet evenings.", 0.9),
            ]
        };
        let mut hits = pool();
        boost_preferences(&mut hits, "Any ideas for my evening?");
        assert_eq!(hits[0].item.id, MemoryId::new(2));
        assert!(hits[0].explain.preference.is_some());
        let mut hits = pool();
        boost_preferences(&mut hits, "Where did I go?");
        assert_eq!(hits[0].item.id, MemoryId::new(1));
        assert!(hits.iter().all(|h| h.explain.preference.is_none()));
    }
}
