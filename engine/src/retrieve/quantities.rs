//! Quantities, without a model: a query that asks how many or how much of its asker's things
//! ("how many online courses have I completed?", "how much did I spend on the mugs?") is
//! answered by what the user said with a number ("I've already completed 12 courses on
//! Coursera", "my previous 8 edX courses"), and those turns share few words with the question
//! while the same conversations' other turns, asking about the same subject, share many. Such a
//! memory is told by a number (in digits, or a number word) and a first-person word; for a
//! query asking for a quantity its score is raised by a fraction, explained in
//! `explain.quantity`.
//!
//! A question counting what its asker got ("how many pieces of jewelry did I acquire?", "how
//! many albums have I purchased or downloaded?") is answered by each turn saying one was got,
//! in passing and often without a number ("I'm glad I got those emerald earrings"): those rise
//! too.
//!
//! A question asking its asker's age ("how old was I when Alex was born?") is answered by the
//! one memory where they said it ("by the way, I just turned 32 last month"), which shares
//! neither words nor much meaning with it: such memories join the rerank's candidates
//! ([`AGE_PROBE`]), ages stated rise, and the asker's own rises above the best hit.
//!
//! A question about elapsed time ("how many days passed between …?", "how many weeks ago …?")
//! asks for a span between events the memories date, not a number they state: it is not read
//! as one.
//!
//! Three cue steps over the ranked pool ([`super::cues`]): `age`, `quantity` and `acquired`.

use crate::vocabulary::{Explanation, Hit, QuantityMatch};

use super::cue_step::{Asked, CueStep};
use crate::vocabulary::Cue;

use super::events::said_by_speaker;
use super::preferences::{fraction, raise_stating, FIRST_PERSON};
use super::time_cues::word_iter;

/// The fraction a quantity's score is raised by, for a query asking for a quantity (measured on
/// LongMemEval-S dev, BENCHMARKS.md: 0.5 to 1.0 give the same recall, 2.0 less).
pub(crate) const QUANTITY_BOOST: f32 = 1.0;
/// Words of a query read for a quantity question, at most.
const MAX_QUERY_WORDS: usize = 64;
/// Words of a memory read for a number, at most.
const MAX_WORDS: usize = 400;

/// Two words by which a query asks for a quantity.
const ASKS: [(&str, &str); 6] = [
    ("how", "many"),
    ("how", "much"),
    ("how", "long"),
    ("how", "old"),
    ("total", "number"),
    ("in", "total"),
];

/// Units of elapsed time: "how many days …" asks for a span between dated events.
const TIME_UNITS: [&str; 12] = [
    "days", "day", "weeks", "week", "months", "month", "years", "year", "hours", "hour", "minutes",
    "minute",
];

/// Number words a memory may state a quantity with.
const NUMBER_WORDS: [&str; 16] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "dozen", "couple", "few", "several",
];

/// First-person words of a statement ("I", "my", "we", "our").
const SPEAKER: [&str; 4] = ["i", "my", "we", "our"];

/// The words by which `query` asks for a quantity of its asker's ("how many", "how much"), if
/// it does: not one about another person ("how many children does Melanie have?"), nor about
/// elapsed time ("how many days ago did I …?").
pub(crate) fn asks_quantity(query: &str) -> Option<String> {
    let w: Vec<String> = word_iter(query).take(MAX_QUERY_WORDS).collect();
    if !w.iter().any(|x| FIRST_PERSON.contains(&x.as_str())) {
        return None;
    }
    (0..w.len().saturating_sub(1)).find_map(|i| {
        let (a, b) = (w[i].as_str(), w[i + 1].as_str());
        let asks = ASKS.iter().any(|(x, y)| a == *x && b == *y);
        let of_time = w
            .get(i + 2)
            .is_some_and(|u| TIME_UNITS.contains(&u.as_str()));
        (asks && !of_time).then(|| format!("{a} {b}"))
    })
}

/// The number `text` states in the first person, if it does: a number in digits or words
/// ("12", "twelve", "a couple") in a text that says "I", "my", "we" or "our".
pub(crate) fn states_quantity(text: &str) -> Option<String> {
    let w: Vec<String> = word_iter(text).take(MAX_WORDS).collect();
    if !w.iter().any(|x| SPEAKER.contains(&x.as_str())) {
        return None;
    }
    w.into_iter()
        .find(|x| x.chars().all(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&x.as_str()))
}

/// For a query asking an age, how many memories join the candidates from each index for the
/// age they state (the nearest to [`AGE_PROBE`], the best by BM25 for [`AGE_PROBE_WORDS`]).
pub(crate) const AGE_CANDIDATES: usize = 10;
/// The text whose embedding finds memories stating an age.
pub(crate) const AGE_PROBE: &str = "I just turned 30. I am 30 years old, in my 30s.";
/// The words by which BM25 finds memories stating an age.
pub(crate) const AGE_PROBE_WORDS: &str =
    "turned turning years old age aged birthday 20s 30s 40s 50s 60s 70s";

/// Word pairs by which a query asks an age ("how old was I …?", "how many years older is my
/// grandma than me?", "the average age of me and my parents").
const ASKS_AGE: [(&str, &str); 6] = [
    ("how", "old"),
    ("years", "older"),
    ("years", "younger"),
    ("my", "age"),
    ("average", "age"),
    ("what", "age"),
];

/// Words after a number that say it is not an age ("I'm 5 minutes away", "I am 3 miles out").
const NOT_AGE_UNITS: [&str; 22] = [
    "minutes", "minute", "hours", "hour", "days", "day", "weeks", "week", "months", "month",
    "miles", "mile", "km", "percent", "dollars", "pounds", "lbs", "kg", "times", "feet", "inches",
    "points",
];

/// The words by which `query` asks an age of its asker's ("how old was I when …?", "how many
/// years will I be when …?"), if it does.
pub(crate) fn asks_age(query: &str) -> Option<String> {
    let w: Vec<String> = word_iter(query).take(MAX_QUERY_WORDS).collect();
    if !w.iter().any(|x| FIRST_PERSON.contains(&x.as_str())) {
        return None;
    }
    let pair = w.windows(2).find_map(|p| {
        ASKS_AGE
            .iter()
            .any(|(a, b)| p[0] == *a && p[1] == *b)
            .then(|| format!("{} {}", p[0], p[1]))
    });
    // "How many years will I be when …?"
    pair.or_else(|| {
        w.windows(4)
            .any(|p| p[0] == "years" && p[1] == "will" && p[3] == "be")
            .then(|| "years will … be".to_owned())
    })
}

/// The age `text` states, if it does: "I just turned 32", "she's 75 years old", "I'm 32, so
/// I'm in my 30s", "he's just 21"; a number from 1 to 120 after "turned", "am", "is", "'s" or
/// "'m", or before "years old", not followed by another unit ("I'm 5 minutes away").
pub(crate) fn states_age(text: &str) -> Option<String> {
    if let Some(own) = states_own_age(text) {
        return Some(own);
    }
    let w: Vec<String> = word_iter(text).take(MAX_WORDS).collect();
    let age = |x: &str| x.parse::<u32>().ok().filter(|n| (1..=120).contains(n));
    let decade = |x: &str| {
        x.strip_suffix('s')
            .and_then(|d| d.parse::<u32>().ok())
            .filter(|n| n % 10 == 0 && (10..=110).contains(n))
    };
    for (i, x) in w.iter().enumerate() {
        let at = |k: usize| w.get(i + k).map(String::as_str).unwrap_or("");
        let unit_after = |k: usize| NOT_AGE_UNITS.contains(&at(k));
        // "32 years old", "a 75-year-old".
        if age(x).is_some() && ["years", "year"].contains(&at(1)) && at(2) == "old" {
            return Some(format!("{x} {} old", at(1)));
        }
        // "in my 30s".
        if x == "my" && decade(at(1)).is_some() {
            return Some(format!("my {}", at(1)));
        }
        if !["turned", "turning", "am", "is", "s", "m", "aged"].contains(&x.as_str()) {
            continue;
        }
        // "I just turned 32", "he's only 21", "I'm 32".
        let k = if ["just", "only", "now", "already"].contains(&at(1)) {
            2
        } else {
            1
        };
        if age(at(k)).is_some() && !unit_after(k + 1) {
            return Some(format!("{x} {}", at(k)));
        }
    }
    None
}

/// The asker's own age `text` states, if it does: "I just turned 32", "I'm 32", "I am 45
/// years old", "I'm in my 30s", "my age is 40", "I'll be 33"; not another's ("my grandma
/// turned 75").
pub(crate) fn states_own_age(text: &str) -> Option<String> {
    let w: Vec<String> = word_iter(text).take(MAX_WORDS).collect();
    let at = |i: usize| w.get(i).map(String::as_str).unwrap_or("");
    let age = |i: usize| {
        at(i).parse::<u32>().is_ok_and(|n| (1..=120).contains(&n))
            && !NOT_AGE_UNITS.contains(&at(i + 1))
    };
    let decade = |i: usize| {
        at(i).strip_suffix('s').is_some_and(|d| {
            d.parse::<u32>()
                .is_ok_and(|n| n % 10 == 0 && (10..=110).contains(&n))
        })
    };
    let adverb = |i: usize| ["just", "only", "now", "already", "recently"].contains(&at(i));
    for i in 0..w.len() {
        let said = |n: usize| Some(w[i..=n].join(" "));
        match (at(i), at(i + 1), at(i + 2)) {
            // "I'm 32", "I am just 21", "I'm in my 30s".
            ("i", "m" | "am", _) => {
                let n = if adverb(i + 2) { i + 3 } else { i + 2 };
                if age(n) {
                    return said(n);
                }
                if at(n) == "in" && at(n + 1) == "my" && decade(n + 2) {
                    return said(n + 2);
                }
            }
            // "I just turned 32", "I'm turning 40".
            ("i", _, _) => {
                let t = if adverb(i + 1) || at(i + 1) == "m" {
                    i + 2
                } else {
                    i + 1
                };
                if ["turned", "turn", "turning"].contains(&at(t)) && age(t + 1) {
                    return said(t + 1);
                }
                // "I'll be 33", "I will be 33".
                if ["ll", "will"].contains(&at(i + 1)) && at(i + 2) == "be" && age(i + 3) {
                    return said(i + 3);
                }
            }
            // "my age is 40".
            ("my", "age", "is") if age(i + 3) => return said(i + 3),
            _ => {}
        }
    }
    None
}

/// Verbs by which a query asks how many things its asker got ("did I acquire", "have I
/// purchased or downloaded", "did I buy").
const ACQUIRE: [&str; 16] = [
    "acquire",
    "acquired",
    "buy",
    "bought",
    "purchase",
    "purchased",
    "get",
    "got",
    "download",
    "downloaded",
    "order",
    "ordered",
    "receive",
    "received",
    "inherit",
    "inherited",
];

/// Past forms by which a memory says its speaker got something ("I got", "I've bought").
const ACQUIRED: [&str; 10] = [
    "got",
    "bought",
    "purchased",
    "acquired",
    "ordered",
    "received",
    "downloaded",
    "inherited",
    "picked",
    "adopted",
];

/// Whether `query`, asking a quantity, asks how many things its asker got.
fn asks_acquired(query: &str) -> bool {
    word_iter(query)
        .take(MAX_QUERY_WORDS)
        .any(|w| ACQUIRE.contains(&w.as_str()))
}

/// The words by which `text` says its speaker got something, if it does: "I got", "I just
/// bought", "I've purchased", "I even got".
pub(crate) fn states_acquired(text: &str) -> Option<String> {
    said_by_speaker(text, |verb| ACQUIRED.contains(&verb))
}

/// How a step explains what it raised: the query asked `asked`, the memory says `said`.
fn mark(asked: &str) -> impl Fn(&mut Explanation, String, f32) + '_ {
    move |e: &mut Explanation, said: String, boost: f32| {
        e.quantity = Some(QuantityMatch {
            cue: format!("asks {asked:?}; it says {said:?}"),
            boost,
        });
    }
}

/// The `age` cue: for a query asking an age, the hits stating one rise by [`QUANTITY_BOOST`],
/// and a hit stating the asker's own age rises above the best hit (by the best score less its
/// own plus its own magnitude; the boost explained is that score added): "how old was I when
/// …?" is answered by the one memory that says how old the asker is, which shares nothing else
/// with the question. Explained in `explain.quantity`; re-orders.
pub(super) struct Ages;

impl CueStep for Ages {
    fn cue(&self) -> Cue {
        Cue::Age
    }

    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]) {
        let Some(age) = asks_age(asked.text) else {
            return;
        };
        let others = |t: &str| states_age(t).filter(|_| states_own_age(t).is_none());
        raise_stating(hits, fraction(QUANTITY_BOOST), others, mark(&age));
        // Above the best hit, whatever its own score (a lexical-only candidate's may be 0).
        let head = hits.first().map_or(0.0, |h| h.score);
        let above_head = |s: f32| {
            let added = head - s + s.abs().max(f32::EPSILON);
            (added, added)
        };
        raise_stating(hits, above_head, states_own_age, mark(&age));
    }
}

/// What a query asks the count of, when it asks one and the `age` cue does not take it.
fn counted(asked: &Asked<'_>) -> Option<String> {
    if asked.cues.has(Cue::Age) && asks_age(asked.text).is_some() {
        return None;
    }
    asks_quantity(asked.text)
}

/// The `quantity` cue: for a query asking for a quantity, the score of each hit that states
/// one rises by [`QUANTITY_BOOST`] (explained in `explain.quantity`); re-orders.
pub(super) struct Quantities;

impl CueStep for Quantities {
    fn cue(&self) -> Cue {
        Cue::Quantity
    }

    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]) {
        if let Some(q) = counted(asked) {
            raise_stating(hits, fraction(QUANTITY_BOOST), states_quantity, mark(&q));
        }
    }
}

/// The `acquired` cue: "how many pieces of jewelry did I acquire?" counts things got, each
/// said in passing ("I'm glad I got those emerald earrings"), often without a number: the hits
/// saying their speaker got something rise by [`QUANTITY_BOOST`] (those stating a number
/// already rose by the `quantity` cue when it is on); re-orders.
pub(super) struct Acquisitions;

impl CueStep for Acquisitions {
    fn cue(&self) -> Cue {
        Cue::Acquired
    }

    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]) {
        let Some(q) = counted(asked).filter(|_| asks_acquired(asked.text)) else {
            return;
        };
        let by_quantity = asked.cues.has(Cue::Quantity);
        let got = |t: &str| {
            if by_quantity && states_quantity(t).is_some() {
                return None;
            }
            states_acquired(t)
        };
        raise_stating(hits, fraction(QUANTITY_BOOST), got, mark(&q));
    }
}

/// The three quantity cues with every cue on, as recall runs them: the tests' step.
#[cfg(test)]
fn boost_quantities(hits: &mut [Hit], query: &str) {
    use crate::vocabulary::Cues;
    let time = super::time_cues::TimeCues::default();
    let asked = Asked {
        text: query,
        reference: 0,
        time: &time,
        cues: Cues::ALL,
    };
    for step in [&Ages as &dyn CueStep, &Quantities, &Acquisitions] {
        step.apply(&asked, hits);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_hit as hit;
    use super::*;

    #[test]
    fn a_question_for_a_quantity_of_its_asker_is_told() {
        for (q, cue) in [
            (
                "What is the total number of online courses I've completed?",
                "total number",
            ),
            ("How many pieces of jewelry did I acquire?", "how many"),
            (
                "How much did I spend on each coffee mug for my coworkers?",
                "how much",
            ),
            (
                "How long have I been working in my current role?",
                "how long",
            ),
            ("How many times did I go to the gym?", "how many"),
        ] {
            assert_eq!(asks_quantity(q).as_deref(), Some(cue), "{q}");
        }
        for q in [
            // Another person's: the memories to find are not the asker's statements.
            "How many children does Melanie have?",
            // Elapsed time: a span between dated events.
            "How many days passed between my visit to the museum and the concert?",
            "How many weeks ago did I start my new job?",
            // Not a quantity.
            "What did I buy for my sister?",
            "",
        ] {
            assert_eq!(asks_quantity(q), None, "{q}");
        }
    }

    #[test]
    fn a_first_person_number_is_a_quantity() {
        for (t, n) in [
            ("I've already completed 12 courses on Coursera", "12"),
            ("my previous eight edX courses", "eight"),
            ("We adopted a couple of kittens", "couple"),
        ] {
            assert_eq!(states_quantity(t).as_deref(), Some(n), "{t}");
        }
        for t in [
            "Can you recommend some online courses for data analysis?",
            "The store opens at 9.",
            "I love hiking in the mountains",
        ] {
            assert_eq!(states_quantity(t), None, "{t}");
        }
    }

    #[test]
    fn the_quantity_rises_for_a_question_asking_one() {
        let pool = || {
            vec![
                hit(1, "Can you recommend some online courses?", 0.9),
                hit(2, "I'm looking for courses on data analysis", 0.8),
                hit(3, "Since I've already completed 12 courses, I'm ready", 0.5),
            ]
        };
        let mut hits = pool();
        boost_quantities(&mut hits, "How many online courses have I completed?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id.get()).collect();
        assert_eq!(ids, [3, 1, 2]);
        assert_eq!(hits[0].score, 1.0);
        let q = hits[0].explain.quantity.as_ref().unwrap();
        assert_eq!(q.cue, "asks \"how many\"; it says \"12\"");
        assert!(hits[1].explain.quantity.is_none());

        // Another question leaves the order and the explanation alone.
        let mut hits = pool();
        boost_quantities(&mut hits, "Which online courses did I look at?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id.get()).collect();
        assert_eq!(ids, [1, 2, 3]);
        assert!(hits.iter().all(|h| h.explain.quantity.is_none()));
    }

    #[test]
    fn a_question_asking_its_askers_age_is_told() {
        for (q, cue) in [
            ("How old was I when Alex was born?", "how old"),
            ("How many years older is my grandma than me?", "years older"),
            (
                "What is the average age of me, my parents, and my grandparents?",
                "average age",
            ),
            (
                "How many years will I be when my friend Rachel gets married?",
                "years will … be",
            ),
        ] {
            assert_eq!(asks_age(q).as_deref(), Some(cue), "{q}");
        }
        for q in [
            "How old is Melanie?",
            "How many years did I work at the bank?",
            "How many pieces of jewelry did I acquire?",
        ] {
            assert_eq!(asks_age(q), None, "{q}");
        }
    }

    #[test]
    fn an_age_stated_is_told_and_the_askers_own_apart() {
        for (t, own) in [
            (
                "By the way, I just turned 32 last month.",
                Some("i just turned 32"),
            ),
            ("I'm 32, so I'm in my 30s.", Some("i m 32")),
            ("I am in my 40s and new to running", Some("i am in my 40s")),
            ("I'll be 33 next spring", Some("i ll be 33")),
            ("my age is 41", Some("my age is 41")),
            ("my grandma, who turned 75 recently", None),
            ("he's just 21 and I'm already mentoring him", None),
        ] {
            assert_eq!(states_own_age(t).as_deref(), own, "{t}");
            assert!(states_age(t).is_some(), "{t}");
        }
        for t in [
            "I'm 5 minutes away",
            "I am 3 miles from the trailhead",
            "I bought 2 rings",
            "Room 404 is on the left",
        ] {
            assert_eq!(states_own_age(t), None, "{t}");
            assert_eq!(states_age(t), None, "{t}");
        }
    }

    #[test]
    fn the_askers_age_rises_to_the_head_for_a_question_asking_it() {
        let pool = || {
            vec![
                hit(1, "Alex the intern is so talented", 2.0),
                hit(2, "my grandma, who turned 75 recently", 1.1),
                hit(3, "Any hiking ideas? By the way, I just turned 32.", 0.1),
            ]
        };
        let mut hits = pool();
        boost_quantities(&mut hits, "How old was I when Alex was born?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id.get()).collect();
        assert_eq!(ids, [3, 2, 1]);
        // The other age doubled; the asker's raised above the best score then (2.2) by its
        // own (0.1).
        assert!((hits[0].score - 2.3).abs() < 1e-5, "{}", hits[0].score);
        assert!((hits[1].score - 2.2).abs() < 1e-5, "{}", hits[1].score);
        let q = hits[0].explain.quantity.as_ref().unwrap();
        assert_eq!(q.cue, "asks \"how old\"; it says \"i just turned 32\"");
        assert!((q.boost - 2.2).abs() < 1e-5, "{}", q.boost);
        // A question not asking an age leaves them alone.
        let mut hits = pool();
        boost_quantities(&mut hits, "What is Alex studying?");
        assert!(hits.iter().all(|h| h.explain.quantity.is_none()));
    }

    #[test]
    fn a_question_counting_what_its_asker_got_raises_each_thing_got() {
        for (t, said) in [
            ("I'm really glad I got those emerald earrings", "i got"),
            ("I've bought their debut album", "i ve bought"),
            ("and I even got my vinyl signed", "i even got"),
            ("I just downloaded it on Spotify", "i just downloaded"),
        ] {
            assert_eq!(states_acquired(t).as_deref(), Some(said), "{t}");
        }
        for t in [
            "I'm thinking of getting a ring",
            "She bought a dress",
            "I forgot my keys",
        ] {
            assert_eq!(states_acquired(t), None, "{t}");
        }
        let pool = || {
            vec![
                hit(1, "Any tips for photographing my jewelry collection?", 0.9),
                hit(2, "By the way, I'm glad I got those emerald earrings", 0.5),
            ]
        };
        let mut hits = pool();
        boost_quantities(&mut hits, "How many pieces of jewelry did I acquire?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id.get()).collect();
        assert_eq!(ids, [2, 1]);
        let q = hits[0].explain.quantity.as_ref().unwrap();
        assert_eq!(q.cue, "asks \"how many\"; it says \"i got\"");
        // Counting what the asker did, not got: only numbers rise.
        let mut hits = pool();
        boost_quantities(&mut hits, "How many times did I clean my jewelry?");
        assert!(hits.iter().all(|h| h.explain.quantity.is_none()));
    }
}
