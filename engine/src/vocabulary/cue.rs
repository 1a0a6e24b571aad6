//! Recall's cues, by name: each is a step of recall ([`crate::retrieve`]'s `cues`) that reads
//! something of the query (a time it names, a request for advice, a count, an age, the first
//! person) and raises or re-orders the ranked hits; [`crate::options::Options::cues`] says which run.

use std::fmt;

/// One of recall's cues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cue {
    /// A time the query names ("last May", "two weeks ago") or a question asking when: the
    /// memories valid then join the candidates and rise (`explain.time`).
    Time,
    /// A query asking for advice raises the memories stating the user's tastes and habits
    /// (`explain.preference`).
    Preference,
    /// A query asking how many or how much raises the memories stating a number
    /// (`explain.quantity`).
    Quantity,
    /// A query counting what its asker got ("how many … did I buy") raises the memories in
    /// which the speaker says they got something, with or without a number
    /// (`explain.quantity`).
    Acquired,
    /// A query asking the asker's age finds the memories stating an age and raises the one
    /// stating the asker's own above the rest (`explain.quantity`).
    Age,
    /// A query in the first person raises the memories saying what their speaker did
    /// (`explain.event`).
    Event,
    /// Among memories stating one fact with different values, the one valid from last takes
    /// the group's best place, for a query that names no time (`explain.newest_first`).
    NewestFirst,
}

impl Cue {
    /// Every cue, in the order recall applies them.
    pub const ALL: [Cue; 7] = [
        Cue::Preference,
        Cue::Age,
        Cue::Quantity,
        Cue::Acquired,
        Cue::Event,
        Cue::Time,
        Cue::NewestFirst,
    ];

    /// The cue's name: `time`, `preference`, `quantity`, `acquired`, `age`, `event`,
    /// `newest-first`.
    pub fn name(self) -> &'static str {
        match self {
            Cue::Time => "time",
            Cue::Preference => "preference",
            Cue::Quantity => "quantity",
            Cue::Acquired => "acquired",
            Cue::Age => "age",
            Cue::Event => "event",
            Cue::NewestFirst => "newest-first",
        }
    }

    /// The cue named `name` ([`Cue::name`]), if any.
    pub fn parse(name: &str) -> Option<Cue> {
        Cue::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Its bit in a [`Cues`] set.
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Cue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Cue`]s: those recall applies ([`crate::options::Options::cues`]; default: all).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cues(u8);

impl Cues {
    /// Every cue.
    pub const ALL: Cues = Cues((1 << Cue::ALL.len()) - 1);
    /// No cue: recall ranks by its strategy alone.
    pub const NONE: Cues = Cues(0);

    /// Whether `cue` is in the set.
    pub fn has(self, cue: Cue) -> bool {
        self.0 & cue.bit() != 0
    }

    /// The set with `cue`.
    #[must_use]
    pub fn with(self, cue: Cue) -> Cues {
        Cues(self.0 | cue.bit())
    }

    /// The set without `cue`.
    #[must_use]
    pub fn without(self, cue: Cue) -> Cues {
        Cues(self.0 & !cue.bit())
    }

    /// The cues in the set, in [`Cue::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Cue> {
        Cue::ALL.into_iter().filter(move |&c| self.has(c))
    }
}

impl Default for Cues {
    fn default() -> Self {
        Cues::ALL
    }
}

impl fmt::Debug for Cues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<Cue> for Cues {
    fn from_iter<I: IntoIterator<Item = Cue>>(cues: I) -> Self {
        cues.into_iter().fold(Cues::NONE, Cues::with)
    }
}
