//! Recall's cues, as a list of steps: each reads something of the query (a time it names, a
//! request for advice, a count, an age, the first person) and raises or re-orders the ranked
//! hits, explaining what it did in the hit's [`crate::vocabulary::Explanation`]. Each is named
//! ([`Cue`]), switched on or off by [`crate::Options::cues`] (all on by default), and measured
//! alone by `retrieval-bench --cues-off NAME` (the ablation table in the bench log).
//!
//! The steps run in [`STEPS`]' order over the ranked pool, before it is cut to `k`. Two cues
//! act earlier too: `time` chooses the pool's size and adds the memories of the window it
//! names to the candidates, `age` adds the memories stating an age to them and keeps them past
//! the reranker's cut (`hybrid`).

use crate::vocabulary::{Cue, Hit};

use super::best_first;
use super::cue_step::{Asked, CueStep};

/// The time cue's step: the hits its time matches rise.
struct TimeBoost;

impl CueStep for TimeBoost {
    fn cue(&self) -> Cue {
        Cue::Time
    }

    fn apply(&self, asked: &Asked<'_>, hits: &mut [Hit]) {
        if asked.time.is_empty() {
            return;
        }
        for h in hits.iter_mut() {
            if let Some(m) = asked.time.matches(&h.item) {
                h.score += m.boost * h.score.abs();
                h.explain.time = Some(m);
            }
        }
        best_first(hits);
    }
}

/// Every step, in the order recall applies them.
const STEPS: [&dyn CueStep; 7] = [
    &super::preferences::Preferences,
    &super::quantities::Ages,
    &super::quantities::Quantities,
    &super::quantities::Acquisitions,
    &super::events::Events,
    &TimeBoost,
    &super::newest_first::NewestFirstStep,
];

/// Applies every cue that is on to `hits`, in [`STEPS`]' order.
pub(super) fn apply_cues(asked: &Asked<'_>, hits: &mut [Hit]) {
    for step in STEPS {
        if asked.cues.has(step.cue()) {
            step.apply(asked, hits);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::time_cues::TimeCues;
    use super::*;
    use crate::item::MemoryId;
    use crate::vocabulary::Cues;

    #[test]
    fn every_cue_has_one_step_and_a_name_that_parses_back() {
        for cue in Cue::ALL {
            assert_eq!(Cue::parse(cue.name()), Some(cue));
            assert_eq!(STEPS.iter().filter(|s| s.cue() == cue).count(), 1, "{cue}");
        }
        assert_eq!(Cue::parse("weather"), None);
    }

    #[test]
    fn a_set_holds_what_was_put_in_it() {
        let set = Cues::ALL.without(Cue::Age).without(Cue::Time);
        assert!(!set.has(Cue::Age) && !set.has(Cue::Time) && set.has(Cue::Event));
        assert_eq!(set.iter().count(), Cue::ALL.len() - 2);
        assert_eq!(Cue::ALL.into_iter().collect::<Cues>(), Cues::ALL);
        assert_eq!(
            Cues::NONE.with(Cue::Event).iter().collect::<Vec<_>>(),
            [Cue::Event]
        );
        assert_eq!(Cues::default(), Cues::ALL);
    }

    #[test]
    fn a_cue_switched_off_changes_nothing() {
        let time = TimeCues::parse("what did I buy last week?", 10 * 86_400_000);
        let ranked = || {
            vec![
                super::super::test_hit(1, "Last week I bought a new lens", 0.5),
                super::super::test_hit(2, "The weather was fine", 0.6),
            ]
        };
        let asked = |cues| Asked {
            text: "what did I buy last week?",
            reference: 10 * 86_400_000,
            time: &time,
            cues,
        };
        let mut hits = ranked();
        apply_cues(&asked(Cues::NONE), &mut hits);
        assert_eq!(hits[0].item.id, MemoryId::new(1));
        assert_eq!(hits[0].score, 0.5);
        let mut hits = ranked();
        apply_cues(&asked(Cues::NONE.with(Cue::Event)), &mut hits);
        assert!(hits.iter().any(|h| h.explain.event.is_some()));
        assert!(hits[0].score > 0.5, "the deed rose: {hits:?}");
    }
}
