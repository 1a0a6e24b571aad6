//! Quantities, without a model: a query that asks how many or how much of its asker's things
//! ("how many online courses have I completed?", "how much did I spend on the mugs?") is
//! answered by what the user said with a number ("I've already completed 12 courses on
//! Coursera", "my previous 8 edX courses"), and those turns share few words with the question
//! while the same conversations' other turns, asking about the same subject, share many. Such a
//! memory is told by a number (in digits, or a number word) and a first-person word; for a
//! query asking for a quantity its score is raised by a fraction, explained in
//! `explain.quantity`.
//!
//! A question about elapsed time ("how many days passed between …?", "how many weeks ago …?")
//! asks for a span between events the memories date, not a number they state: it is not read
//! as one.
//!
//! A pure step over the ranked pool; [`super::recall`] calls it before the cut to `k`.

use crate::vocabulary::{Hit, QuantityMatch};

use super::preferences::{raise_stating, FIRST_PERSON};
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

/// Raises by [`QUANTITY_BOOST`], for a query asking for a quantity, the score of each hit that
/// states one (explained in `explain.quantity`), and re-orders.
pub(crate) fn boost_quantities(hits: &mut [Hit], query: &str) {
    let Some(asked) = asks_quantity(query) else {
        return;
    };
    raise_stating(hits, QUANTITY_BOOST, states_quantity, |e, number, boost| {
        e.quantity = Some(QuantityMatch {
            cue: format!("asks {asked:?}; it says {number:?}"),
            boost,
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::NewMemory;
    use crate::vocabulary::Explanation;

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

    fn hit(id: u64, text: &str, score: f32) -> Hit {
        Hit {
            item: NewMemory::new(text).into_item(id, 0),
            score,
            rank: 0,
            explain: Explanation::default(),
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
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id).collect();
        assert_eq!(ids, [3, 1, 2]);
        assert_eq!(hits[0].score, 1.0);
        let q = hits[0].explain.quantity.as_ref().unwrap();
        assert_eq!(q.cue, "asks \"how many\"; it says \"12\"");
        assert!(hits[1].explain.quantity.is_none());

        // Another question leaves the order and the explanation alone.
        let mut hits = pool();
        boost_quantities(&mut hits, "Which online courses did I look at?");
        let ids: Vec<u64> = hits.iter().map(|h| h.item.id).collect();
        assert_eq!(ids, [1, 2, 3]);
        assert!(hits.iter().all(|h| h.explain.quantity.is_none()));
    }
}
