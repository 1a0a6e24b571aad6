//! Time in a query, without a model: the window a query names ("in May 2023", "last May",
//! "yesterday", "on 13 October 2023", "two weeks ago", relative to the query's reference time)
//! and whether it asks *when*. A memory valid (for a turn: spoken) in the window, or, for a
//! question asking when, a memory that says when, is boosted; the boost is explained.

use crate::clock::Timestamp;
use crate::item::MemoryItem;
use crate::time::{civil_from_days, days_from_civil};
use crate::vocabulary::TimeMatch;

/// Score boost of a memory valid in the window the query names (a fraction of its score):
/// doubled. It was 0.5 while fused scores lay in [0, 1]; since the fusion's first places score
/// in [1, 2] (`ScoreFusion`), a memory of the named time below them needs more to climb:
/// on LoCoMo's conversations (real session dates) 1.0 gave rerank R@10 0.704 where 0.5 gave
/// 0.697, and LongMemEval moved by no question (BENCHMARKS.md).
pub(crate) const WINDOW_BOOST: f32 = 1.0;
/// Score boost of a memory that says when, for a query that asks when.
pub(crate) const SAYS_WHEN_BOOST: f32 = 0.5;

const DAY_MS: i64 = 86_400_000;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The time cues of one query.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TimeCues {
    /// The window `[start, end)` (ms) the query names, and its words.
    pub(crate) window: Option<(Timestamp, Timestamp, String)>,
    /// The query asks when (when, what date, how long ago …).
    pub(crate) asks_when: bool,
}

impl TimeCues {
    /// The cues of `query`, relative times read against `reference` (ms).
    pub(crate) fn parse(query: &str, reference: Timestamp) -> TimeCues {
        let words = words(query);
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        TimeCues {
            window: window(&w, reference),
            asks_when: asks_when(&w),
        }
    }

    /// True if the query says nothing of time.
    pub(crate) fn is_empty(&self) -> bool {
        self.window.is_none() && !self.asks_when
    }

    /// The boost `item` earns, if any.
    pub(crate) fn matches(&self, item: &MemoryItem) -> Option<TimeMatch> {
        if let Some((start, end, words)) = &self.window {
            let overlaps = item.valid_from < *end && item.valid_until.is_none_or(|u| u > *start);
            // An open-ended memory valid since long before the window is not "of" that time:
            // only one that began in it, or whose whole window overlaps it, is.
            let began_in = (*start..*end).contains(&item.valid_from);
            if began_in || (overlaps && item.valid_until.is_some()) {
                return Some(TimeMatch {
                    cue: format!("{words}: {} to {}", day_of(*start), day_of(*end)),
                    boost: WINDOW_BOOST,
                });
            }
        }
        (self.asks_when && says_when(&item.text)).then(|| TimeMatch {
            cue: "asks when; it says when".into(),
            boost: SAYS_WHEN_BOOST,
        })
    }
}

fn day_of(ms: Timestamp) -> String {
    let (y, m, d) = civil_from_days(ms.div_euclid(DAY_MS));
    format!("{y:04}-{m:02}-{d:02}")
}

/// The lower-cased runs of letters and digits of `text`.
pub(super) fn words(text: &str) -> Vec<String> {
    word_iter(text).collect()
}

/// The lower-cased runs of letters and digits of `text`, read as they are asked for.
pub(super) fn word_iter(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn month_of(word: &str) -> Option<i64> {
    let full = MONTHS.iter().position(|m| *m == word);
    let short = (word.len() >= 3 && word != "mar" && word != "may")
        .then(|| {
            MONTHS
                .iter()
                .position(|m| m.starts_with(word) && word.len() <= 4 && m.len() > 4)
        })
        .flatten();
    full.or(short).map(|i| i as i64 + 1)
}

fn year_of(word: &str) -> Option<i64> {
    let y: i64 = word.parse().ok()?;
    (word.len() == 4 && (1900..=2100).contains(&y)).then_some(y)
}

fn day_number(word: &str) -> Option<i64> {
    let digits = word.trim_end_matches(|c: char| c.is_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.is_empty() || digits.len() > 2 {
        return None;
    }
    let d: i64 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

fn ms_of(y: i64, m: i64, d: i64) -> Timestamp {
    days_from_civil(y, m, d) * DAY_MS
}

/// `[start, end)` of month `m` of year `y`.
fn month_window(y: i64, m: i64) -> (Timestamp, Timestamp) {
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    (ms_of(y, m, 1), ms_of(ny, nm, 1))
}

/// The window the words name, the most specific first.
fn window(w: &[&str], reference: Timestamp) -> Option<(Timestamp, Timestamp, String)> {
    let day = reference.div_euclid(DAY_MS);
    let (ry, rm, _) = civil_from_days(day);
    let named =
        |start: Timestamp, end: Timestamp, words: &[&str]| Some((start, end, words.join(" ")));
    // ISO dates: 2023 05 08 (the separators are gone).
    for (i, t) in w.windows(3).enumerate() {
        if let (Some(y), Ok(m), Some(d)) = (year_of(t[0]), t[1].parse::<i64>(), day_number(t[2])) {
            if (1..=12).contains(&m) && t[1].len() == 2 {
                let s = ms_of(y, m, d);
                return named(s, s + DAY_MS, &w[i..i + 3]);
            }
        }
    }
    // 8 May 2023, May 8 2023, May 2023.
    for (i, t) in w.iter().enumerate() {
        let Some(m) = month_of(t) else { continue };
        let next_year = w.get(i + 1).and_then(|n| year_of(n));
        let after = w.get(i + 1).and_then(|n| day_number(n));
        let before = i.checked_sub(1).and_then(|j| day_number(w[j]));
        if let (Some(d), Some(y)) = (before, next_year) {
            let s = ms_of(y, m, d);
            return named(s, s + DAY_MS, &w[i - 1..i + 2]);
        }
        if let (Some(d), Some(y)) = (after, w.get(i + 2).and_then(|n| year_of(n))) {
            let s = ms_of(y, m, d);
            return named(s, s + DAY_MS, &w[i..i + 3]);
        }
        if let Some(y) = next_year {
            let (s, e) = month_window(y, m);
            return named(s, e, &w[i..i + 2]);
        }
    }
    // A month without a year: "last May" is the latest May before this month, "in May" the
    // latest May up to this month. ("may" alone is a verb: it needs "in", "last" or "since".)
    for (i, t) in w.iter().enumerate() {
        let Some(m) = month_of(t) else { continue };
        let prev = i.checked_sub(1).map(|j| w[j]);
        if !matches!(
            prev,
            Some("in" | "last" | "since" | "during" | "early" | "late" | "of")
        ) {
            continue;
        }
        let strictly_before = prev == Some("last");
        let y = if m < rm || (m == rm && !strictly_before) {
            ry
        } else {
            ry - 1
        };
        let (s, e) = month_window(y, m);
        return named(s, e, &w[i - 1..=i]);
    }
    for (i, t) in w.iter().enumerate() {
        if let Some(y) = year_of(t) {
            return named(ms_of(y, 1, 1), ms_of(y + 1, 1, 1), &w[i..=i]);
        }
    }
    let days = |from: i64, to: i64, words: &[&str]| {
        named((day + from) * DAY_MS, (day + to) * DAY_MS, words)
    };
    for (i, t) in w.iter().enumerate() {
        let next = w.get(i + 1).copied();
        match (*t, next) {
            ("yesterday", _) => return days(-1, 0, &w[i..=i]),
            ("today" | "tonight", _) => return days(0, 1, &w[i..=i]),
            ("last" | "past", Some("week")) => return days(-14, 0, &w[i..i + 2]),
            ("last" | "past", Some("weekend")) => return days(-9, 0, &w[i..i + 2]),
            ("last", Some("month")) => {
                let (y, m) = if rm == 1 { (ry - 1, 12) } else { (ry, rm - 1) };
                let (s, e) = month_window(y, m);
                return named(s, e, &w[i..i + 2]);
            }
            ("last", Some("year")) => {
                return named(ms_of(ry - 1, 1, 1), ms_of(ry, 1, 1), &w[i..i + 2])
            }
            ("this", Some("week")) => return days(-7, 1, &w[i..i + 2]),
            ("this", Some("month")) => {
                let (s, e) = month_window(ry, rm);
                return named(s, e, &w[i..i + 2]);
            }
            ("this", Some("year")) => {
                return named(ms_of(ry, 1, 1), ms_of(ry + 1, 1, 1), &w[i..i + 2])
            }
            ("recently" | "lately", _) => return days(-30, 1, &w[i..=i]),
            // "last Saturday": the latest Saturday before today (a week ago on a Saturday).
            ("last", Some(d)) if weekday_of(d).is_some() => {
                let today = (day + 3).rem_euclid(7);
                let back = match (today - weekday_of(d).expect("matched")).rem_euclid(7) {
                    0 => 7,
                    n => n,
                };
                return days(-back, -back + 1, &w[i..i + 2]);
            }
            _ => {}
        }
        // "two weeks ago", "3 days ago": the unit's span around that point.
        if w.get(i + 2) == Some(&"ago") {
            if let (Some(n), Some(unit)) = (count_of(t), next.and_then(unit_days)) {
                let at = -n * unit;
                return days(at - unit, at + unit, &w[i..i + 3]);
            }
        }
    }
    None
}

/// Monday 0 to Sunday 6 (1970-01-01, day 0, was a Thursday: 3).
fn weekday_of(word: &str) -> Option<i64> {
    const DAYS: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    DAYS.iter().position(|d| *d == word).map(|i| i as i64)
}

fn count_of(word: &str) -> Option<i64> {
    const NUMBERS: [&str; 10] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    match word {
        "a" | "an" => Some(1),
        "few" | "couple" => Some(2),
        _ => word
            .parse()
            .ok()
            .filter(|n| (1..=1000).contains(n))
            .or_else(|| {
                NUMBERS
                    .iter()
                    .position(|n| *n == word)
                    .map(|i| i as i64 + 1)
            }),
    }
}

fn unit_days(word: &str) -> Option<i64> {
    match word.trim_end_matches('s') {
        "day" => Some(1),
        "week" => Some(7),
        "month" => Some(30),
        "year" => Some(365),
        _ => None,
    }
}

/// "when …", "what date / year / month / day", "how long ago", "since when", "which year".
fn asks_when(w: &[&str]) -> bool {
    w.first() == Some(&"when")
        || w.windows(2).any(|p| {
            matches!(
                (p[0], p[1]),
                ("what" | "which", "date" | "year" | "month" | "day" | "time")
                    | ("long", "ago")
                    | ("since", "when")
                    | ("how", "long")
            )
        })
}

/// True if `text` says when: a relative day or period (yesterday, last week, next month, two
/// years ago), a weekday, a month with a number or preposition, or a year.
pub(crate) fn says_when(text: &str) -> bool {
    const WORDS: [&str; 11] = [
        "yesterday",
        "today",
        "tonight",
        "tomorrow",
        "ago",
        "recently",
        "weekend",
        "lately",
        "anniversary",
        "birthday",
        "since",
    ];
    const PERIODS: [&str; 8] = [
        "week", "month", "year", "night", "summer", "winter", "fall", "spring",
    ];
    let words = words(text);
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    w.iter().enumerate().any(|(i, t)| {
        let prev = i.checked_sub(1).map(|j| w[j]);
        let next = w.get(i + 1).copied();
        WORDS.contains(t)
            || year_of(t).is_some()
            || ((PERIODS.contains(t) || weekday_of(t).is_some())
                && matches!(
                    prev,
                    Some("last" | "next" | "this" | "that" | "on" | "every")
                ))
            || (month_of(t).is_some()
                && (matches!(
                    prev,
                    Some("in" | "last" | "next" | "since" | "of" | "early" | "late")
                ) || next.is_some_and(|n| day_number(n).is_some() || year_of(n).is_some())
                    || prev.is_some_and(|p| day_number(p).is_some())))
            || (count_of(t).is_some() && next.and_then(unit_days).is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::MemoryId;
    use crate::time::parse_rfc3339;

    fn at(s: &str) -> Timestamp {
        parse_rfc3339(s).unwrap()
    }

    fn window_of(q: &str, reference: &str) -> Option<(String, String)> {
        TimeCues::parse(q, at(reference))
            .window
            .map(|(s, e, _)| (day_of(s), day_of(e)))
    }

    fn pair(a: &str, b: &str) -> Option<(String, String)> {
        Some((a.into(), b.into()))
    }

    #[test]
    fn names_dates_months_and_years() {
        let r = "2023-10-20T12:00:00Z";
        assert_eq!(
            window_of("What did Gina find on 1 February, 2023?", r),
            pair("2023-02-01", "2023-02-02")
        );
        assert_eq!(
            window_of("What painting did she show on October 13, 2023?", r),
            pair("2023-10-13", "2023-10-14")
        );
        assert_eq!(
            window_of("What did she do in December 2023?", r),
            pair("2023-12-01", "2024-01-01")
        );
        assert_eq!(
            window_of("How often at the beach in 2022?", r),
            pair("2022-01-01", "2023-01-01")
        );
        assert_eq!(
            window_of("notes from 2023-05-08", r),
            pair("2023-05-08", "2023-05-09")
        );
    }

    #[test]
    fn reads_relative_times_against_the_reference() {
        let r = "2023-10-20T12:00:00Z";
        assert_eq!(
            window_of("what happened yesterday", r),
            pair("2023-10-19", "2023-10-20")
        );
        assert_eq!(
            window_of("When did Melanie go camping in June?", r),
            pair("2023-06-01", "2023-07-01")
        );
        assert_eq!(
            window_of("what did she start last October", r),
            pair("2022-10-01", "2022-11-01")
        );
        assert_eq!(
            window_of("what did she start in October", r),
            pair("2023-10-01", "2023-11-01")
        );
        assert_eq!(
            window_of("the trip last year", r),
            pair("2022-01-01", "2023-01-01")
        );
        assert_eq!(
            window_of("two weeks ago", r),
            pair("2023-09-29", "2023-10-13")
        );
        // 2023-10-20 was a Friday.
        assert_eq!(
            window_of("who did I go with last Saturday?", r),
            pair("2023-10-14", "2023-10-15")
        );
        assert_eq!(
            window_of("what did I eat last Friday", r),
            pair("2023-10-13", "2023-10-14")
        );
        assert_eq!(
            window_of("what did I do last Thursday", r),
            pair("2023-10-19", "2023-10-20")
        );
        assert_eq!(window_of("You may go", r), None);
        assert_eq!(window_of("What is Caroline's identity?", r), None);
    }

    #[test]
    fn knows_a_question_asking_when_and_a_text_saying_when() {
        assert!(TimeCues::parse("When did Caroline go to the support group?", 0).asks_when);
        assert!(TimeCues::parse("How long ago was her birthday?", 0).asks_when);
        assert!(!TimeCues::parse("What did Caroline research?", 0).asks_when);
        assert!(says_when(
            "I went to a LGBTQ support group yesterday and it was so powerful."
        ));
        assert!(says_when("I ran a charity race last Saturday"));
        assert!(says_when("We're going camping in June"));
        assert!(says_when("I've known them for 4 years"));
        assert!(!says_when("You may want to read it, it was so powerful."));
        assert!(!says_when("Hey Mel! Good to see you!"));
    }

    #[test]
    fn matches_what_began_in_the_window() {
        let cues = TimeCues::parse("what happened in May 2023", 0);
        let mut item = crate::item::NewMemory::new("we met")
            .into_item(MemoryId::new(1), at("2023-05-08T13:56:00Z"));
        item.valid_from = at("2023-05-08T13:56:00Z");
        assert_eq!(cues.matches(&item).map(|m| m.boost), Some(WINDOW_BOOST));
        item.valid_from = at("2023-04-30T13:56:00Z");
        assert_eq!(
            cues.matches(&item),
            None,
            "open-ended since before the window"
        );
        item.valid_until = Some(at("2023-05-02T00:00:00Z"));
        assert!(cues.matches(&item).is_some(), "held for part of the window");
    }
}
