//! Conversations as memories: turns with speaker, session and time, numbered across calls, a
//! session summary kept current, facts drawn by the extractor hook and sourced to their turn,
//! dated context lines, and queries naming a time.

use std::sync::Arc;

use memloop::time::parse_rfc3339;
use memloop::{
    context::ContextRequest, plug::Extracted, plug::Extractor, plug::Turn, retrieve::Cue,
    retrieve::Cues, Clock, Error, InvalidInput, Kind, Memory, MemoryFilter, MemoryId, NewMemory,
    Options, Query, Scope, Strategy,
};

use crate::common::hashing;

fn at(s: &str) -> i64 {
    parse_rfc3339(s).unwrap()
}

fn open_with(
    dir: &std::path::Path,
    clock: &Clock,
    extractor: Option<Arc<dyn Extractor>>,
) -> Memory {
    let mut options = Options {
        dedup_threshold: Some(0.75),
        ..hashing(256, clock)
    };
    options.hooks.extractor = extractor;
    Memory::open(dir, options).unwrap()
}

fn ana() -> Scope {
    Scope::user("ana")
}

/// Draws "X lives in Y" facts from turns saying "I live in Y" / "I moved to Y" (the kind of
/// rule a caller may put behind the hook instead of an LLM).
struct LivesIn;

impl Extractor for LivesIn {
    fn extract(&self, _session: &str, turns: &[Turn]) -> memloop::Result<Vec<Extracted>> {
        let mut out = Vec::new();
        for (i, t) in turns.iter().enumerate() {
            for cue in ["I live in ", "I moved to "] {
                if let Some(rest) = t.text.find(cue).map(|p| &t.text[p + cue.len()..]) {
                    let place = rest.trim_end_matches(['.', '!']);
                    out.push(Extracted {
                        turn: i,
                        memory: NewMemory::new(format!("{} lives in {place}", t.speaker))
                            .kind(Kind::Fact),
                    });
                }
            }
        }
        Ok(out)
    }
}

/// Refuses: the conversation must then store nothing.
struct Failing;

impl Extractor for Failing {
    fn extract(&self, _session: &str, _turns: &[Turn]) -> memloop::Result<Vec<Extracted>> {
        Err(InvalidInput::Hook("the model is offline".into()).into())
    }
}

/// Names a turn it was not given.
struct OutOfRange;

impl Extractor for OutOfRange {
    fn extract(&self, _session: &str, turns: &[Turn]) -> memloop::Result<Vec<Extracted>> {
        Ok(vec![Extracted {
            turn: turns.len(),
            memory: NewMemory::new("a fact of no turn").kind(Kind::Fact),
        }])
    }
}

#[test]
fn turns_are_numbered_across_calls_dated_and_summarised() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(at("2023-05-08T14:00:00Z"));
    let m = open_with(dir.path(), &clock, None);
    let may = at("2023-05-08T13:56:00Z");
    let first = m
        .remember_conversation(
            "s1",
            &[
                Turn::new("Caroline", "I went to a support group yesterday.", may),
                Turn::new(
                    "Melanie",
                    "That sounds powerful, tell me more!",
                    may + 60_000,
                ),
            ],
            &ana(),
        )
        .unwrap();
    assert_eq!((first.first_turn, first.turns.len()), (0, 2));
    assert_eq!(
        first.to_string(),
        format!(
            "2 turns of session s1 (turns 0 to 1), its summary memory {}",
            first.summary
        )
    );
    let turn = m.get(first.turns[0]).unwrap().unwrap();
    assert_eq!(turn.kind, Kind::Turn);
    assert_eq!(turn.text, "Caroline: I went to a support group yesterday.");
    assert_eq!(turn.subject.as_deref(), Some("Caroline"));
    assert_eq!(turn.valid_from, may);
    assert_eq!(turn.user.as_deref(), Some("ana"));
    assert_eq!(turn.session.as_deref(), Some("s1"));
    assert_eq!(turn.sources[0].document, "session/s1");
    assert_eq!(turn.sources[0].span, Some((0, 1)));
    let summary = m.get(first.summary).unwrap().unwrap();
    assert_eq!(summary.kind, Kind::Summary);
    assert!(
        summary
            .text
            .starts_with("Conversation s1 (2023-05-08, 2 turns; Caroline, Melanie):"),
        "{}",
        summary.text
    );

    clock.set(at("2023-05-09T10:00:00Z")).unwrap();
    let second = m
        .remember_conversation(
            "s1",
            &[Turn::new(
                "Caroline",
                "It helped me a lot.",
                at("2023-05-09T09:00:00Z"),
            )],
            &ana(),
        )
        .unwrap();
    assert_eq!(second.first_turn, 2);
    let spans: Vec<_> = m
        .scoped(&ana())
        .conversation("s1")
        .unwrap()
        .iter()
        .map(|t| t.sources[0].span.unwrap().0)
        .collect();
    assert_eq!(spans, [0, 1, 2]);
    // The summary is one memory, its new version superseding the old.
    assert_ne!(second.summary, first.summary);
    let old = m.get(first.summary).unwrap().unwrap();
    assert_eq!(old.superseded_by, Some(second.summary));
    let new = m.get(second.summary).unwrap().unwrap();
    assert!(
        new.text.contains("2023-05-08 to 2023-05-09, 3 turns"),
        "{}",
        new.text
    );
    // Another user's session of the same name is a conversation of its own.
    let bob = m
        .remember_conversation(
            "s1",
            &[Turn::new("Bob", "hello there", may)],
            &Scope::user("bob"),
        )
        .unwrap();
    assert_eq!(bob.first_turn, 0);
    assert_eq!(m.scoped(&ana()).conversation("s1").unwrap().len(), 3);

    // A context shows each turn's date and speaker.
    let mut request = ContextRequest::new("support group", 200);
    request.query = request
        .query
        .filter(MemoryFilter::new().kind(Kind::Turn).scope(ana()));
    let context = m.context(&request).unwrap();
    assert!(
        context
            .text
            .contains("[2023-05-08 13:56] Caroline: I went to a support group yesterday."),
        "{}",
        context.text
    );
}

#[test]
fn extracted_facts_are_sourced_to_their_turn_and_a_move_supersedes() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(at("2024-01-01T00:00:00Z"));
    let m = open_with(dir.path(), &clock, Some(Arc::new(LivesIn)));
    let jan = at("2023-01-10T12:00:00Z");
    let report = m
        .remember_conversation(
            "chat",
            &[
                Turn::new("Alice", "Good morning!", jan),
                Turn::new("Alice", "I live in the city of Paris.", jan + 1_000),
            ],
            &ana(),
        )
        .unwrap();
    assert_eq!(report.extracted.len(), 1);
    let fact = m.get(report.extracted[0].id).unwrap().unwrap();
    assert_eq!(fact.text, "Alice lives in the city of Paris");
    assert_eq!(fact.kind, Kind::Fact);
    assert_eq!(fact.sources[0].document, "session/chat");
    assert_eq!(fact.sources[0].span, Some((1, 2)), "sourced to the turn");
    assert_eq!(fact.valid_from, jan + 1_000);
    assert_eq!(fact.user.as_deref(), Some("ana"));

    let june = at("2023-06-01T12:00:00Z");
    let moved = m
        .remember_conversation(
            "chat",
            &[Turn::new("Alice", "I moved to the city of Berlin.", june)],
            &ana(),
        )
        .unwrap();
    let action = moved.extracted[0].action;
    assert_eq!(action.previous(), Some(fact.id), "{action:?}");
    let old = m.get(fact.id).unwrap().unwrap();
    assert_eq!(
        old.valid_until,
        Some(june),
        "the move closes the old fact's window"
    );
    // As of March, Paris held.
    let hits = m
        .recall(
            &Query::new("where does alice live").k(5).filter(
                MemoryFilter::new()
                    .kind(Kind::Fact)
                    .as_of(at("2023-03-01T00:00:00Z")),
            ),
        )
        .unwrap();
    assert_eq!(hits[0].item.id, fact.id);
}

#[test]
fn a_refused_conversation_stores_nothing() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let turns = [Turn::new("Ana", "hello", 500)];
    for (extractor, what) in [
        (Arc::new(Failing) as Arc<dyn Extractor>, "hook"),
        (Arc::new(OutOfRange), "invalid"),
    ] {
        let sub = dir.path().join(what);
        let m = open_with(&sub, &clock, Some(extractor));
        let err = m.remember_conversation("s", &turns, &ana()).unwrap_err();
        let Error::InvalidInput(why) = &err else {
            panic!("{what}: {err:?}")
        };
        match (what, why.reason()) {
            ("hook", InvalidInput::Hook(_)) | ("invalid", InvalidInput::ExtractedTurn { .. }) => {}
            _ => panic!("{what}: {err:?}"),
        }
        assert_eq!(m.stats().unwrap().memories, 0, "{what}: nothing stored");
    }
    let m = open_with(&dir.path().join("plain"), &clock, None);
    for (session, turns, scope) in [
        ("", vec![Turn::new("Ana", "hi", 1)], ana()),
        ("s", vec![], ana()),
        ("s", vec![Turn::new(" ", "hi", 1)], ana()),
        ("s", vec![Turn::new("Ana", " \u{0} ", 1)], ana()),
        (
            "s",
            vec![Turn::new("Ana", "hi", 1)],
            Scope {
                session: Some("other".into()),
                ..ana()
            },
        ),
    ] {
        let err = m
            .remember_conversation(session, &turns, &scope)
            .unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    }
    assert_eq!(m.stats().unwrap().memories, 0);
}

#[test]
fn a_query_naming_a_time_prefers_what_was_said_then() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(at("2023-10-20T12:00:00Z"));
    let m = open_with(dir.path(), &clock, None);
    let said =
        |month: &str, text: &str| Turn::new("Mel", text, at(&format!("2023-{month}-10T12:00:00Z")));
    let report = m
        .remember_conversation(
            "s",
            &[
                said("05", "we painted the garden fence together"),
                said("06", "we painted the kitchen walls together"),
                said("07", "we painted the bedroom door together"),
            ],
            &Scope::default(),
        )
        .unwrap();
    let turns = MemoryFilter::new().kind(Kind::Turn);
    for strategy in [Strategy::Single, Strategy::RERANK] {
        let hits = m
            .retrieve(
                &Query::new("what did we paint in June")
                    .k(1)
                    .filter(turns.clone()),
                strategy,
            )
            .unwrap();
        assert_eq!(hits[0].item.id, report.turns[1], "{strategy:?}");
        let time = hits[0].explain.time.as_ref().expect("explained");
        assert!(
            time.cue.starts_with("in june: 2023-06-01 to 2023-07-01"),
            "{}",
            time.cue
        );
    }
    // "last month" is read against as_of when the query gives one.
    let hits = m
        .recall(
            &Query::new("what did we paint last month")
                .k(1)
                .filter(turns.clone().as_of(at("2023-06-15T00:00:00Z"))),
        )
        .unwrap();
    assert_eq!(hits[0].item.id, report.turns[0]);
    // A query asking when prefers a memory that says when.
    let id = m
        .remember(NewMemory::new("Mel ran a charity race last Saturday").scope(Scope::default()))
        .unwrap();
    m.remember(NewMemory::new("Mel ran a charity race for fun"))
        .unwrap();
    let hits = m
        .recall(&Query::new("When did Mel run a charity race?").k(1))
        .unwrap();
    assert_eq!(hits[0].item.id, id);
    assert!(hits[0].explain.time.is_some());
}

#[test]
fn a_memory_of_the_named_time_is_found_below_every_candidate() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(at("2023-10-20T12:00:00Z"));
    let m = open_with(dir.path(), &clock, None);
    let said =
        |day: &str, text: String| Turn::new("Mel", text, at(&format!("2023-10-{day}T12:00:00Z")));
    // 400 short turns of yesterday match the question's words better than the one it asks
    // about, which is longer and two weeks old: neither index ranks it among its candidates
    // (three times k).
    let noise: Vec<Turn> = (0..400)
        .map(|i| said("19", format!("we painted fence {i}")))
        .collect();
    m.remember_conversation("now", &noise, &Scope::default())
        .unwrap();
    let mut then = vec![said(
        "06",
        "we painted the old wooden shed behind the house together slowly".into(),
    )];
    then.extend((0..5).map(|i| said("05", format!("the weather was cold and grey {i}"))));
    let report = m
        .remember_conversation("then", &then, &Scope::default())
        .unwrap();
    let shed = report.turns[0];
    let turns = MemoryFilter::new().kind(Kind::Turn);
    for strategy in [
        Strategy::Single,
        Strategy::Lexical,
        Strategy::RERANK,
        Strategy::ITERATIVE,
    ] {
        let hits = m
            .retrieve(
                &Query::new("what did we paint two weeks ago?")
                    .k(40)
                    .filter(turns.clone()),
                strategy,
            )
            .unwrap();
        let found = hits.iter().find(|h| h.item.id == shed);
        let found = found.unwrap_or_else(|| panic!("{strategy:?}: the shed is not among the hits"));
        assert!(found.explain.time.is_some(), "{strategy:?}");
        // Without the time, it stays below the candidates.
        let hits = m
            .retrieve(
                &Query::new("what did we paint?").k(40).filter(turns.clone()),
                strategy,
            )
            .unwrap();
        assert!(hits.iter().all(|h| h.item.id != shed), "{strategy:?}");
    }
}

#[test]
fn a_question_asking_for_advice_prefers_what_the_user_likes() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(at("2023-10-20T12:00:00Z"));
    let m = open_with(dir.path(), &clock, None);
    let said = |text: &str| Turn::new("user", text, at("2023-10-19T12:00:00Z"));
    let report = m
        .remember_conversation(
            "s",
            &[
                said("I went out for dinner at an Italian place downtown"),
                said("I prefer quiet dinner places with vegetarian dishes"),
            ],
            &Scope::default(),
        )
        .unwrap();
    let turns = MemoryFilter::new().kind(Kind::Turn);
    let hits = m
        .retrieve(
            &Query::new("can you suggest a place for dinner for me?")
                .k(2)
                .filter(turns.clone()),
            Strategy::RERANK,
        )
        .unwrap();
    // The turn stating a taste is raised by the boost, explained; the other is not.
    let liked = hits.iter().find(|h| h.item.id == report.turns[1]).unwrap();
    let why = liked.explain.preference.as_ref().expect("explained");
    assert!(why.cue.contains("i prefer"), "{}", why.cue);
    let fused = liked.explain.fused.unwrap();
    assert!((liked.score - fused * (1.0 + why.boost)).abs() < 1e-5);
    let other = hits.iter().find(|h| h.item.id == report.turns[0]).unwrap();
    assert!(other.explain.preference.is_none());
    // A question not asking for advice is not moved.
    let hits = m
        .retrieve(
            &Query::new("where did I go for dinner?").k(2).filter(turns),
            Strategy::RERANK,
        )
        .unwrap();
    assert!(hits.iter().all(|h| h.explain.preference.is_none()));
}

/// A store of 301 turns, one of which says the user's age and shares no word with a question
/// asking it, opened with `cues`; the store and that turn's id.
fn told_age(dir: &std::path::Path, cues: Cues) -> (Memory, MemoryId) {
    let clock = Clock::manual(at("2023-05-30T12:00:00Z"));
    let m = Memory::open(
        dir,
        Options {
            dedup_threshold: Some(0.75),
            cues,
            ..hashing(256, &clock)
        },
    )
    .unwrap();
    let said = |text: &str| Turn::new("user", text, at("2023-05-24T12:00:00Z"));
    // Many turns about Alex, which share the question's words; one, among other chat, says
    // how old the user is and shares none of them.
    let mut turns: Vec<Turn> = (0..150)
        .map(|i| {
            said(&format!(
                "Alex the intern asked me question {i} about when the project was born"
            ))
        })
        .collect();
    turns.extend((0..150).map(|i| said(&format!("I need ideas for a weekend hike, plan {i}"))));
    turns.push(said(
        "I'm thinking about a career change. By the way, I just turned 32 last month.",
    ));
    let report = m
        .remember_conversation("s", &turns, &Scope::default())
        .unwrap();
    let age = *report.turns.last().unwrap();
    (m, age)
}

#[test]
fn a_question_asking_the_users_age_finds_where_they_said_it() {
    let dir = crate::common::tempdir();
    let (m, age) = told_age(dir.path(), Cues::default());
    let filter = MemoryFilter::new().kind(Kind::Turn);
    for strategy in [Strategy::RERANK, Strategy::ITERATIVE] {
        let hits = m
            .retrieve(
                &Query::new("How old was I when Alex was born?")
                    .k(5)
                    .filter(filter.clone()),
                strategy,
            )
            .unwrap();
        let found = hits
            .iter()
            .find(|h| h.item.id == age)
            .unwrap_or_else(|| panic!("{strategy:?}: the user's age is not among the hits"));
        let why = found.explain.quantity.as_ref().expect("explained");
        assert!(why.cue.contains("i just turned 32"), "{}", why.cue);
        // A question not asking an age does not find it.
        let hits = m
            .retrieve(
                &Query::new("When was Alex born?")
                    .k(5)
                    .filter(filter.clone()),
                strategy,
            )
            .unwrap();
        assert!(hits.iter().all(|h| h.item.id != age), "{strategy:?}");
    }
}

#[test]
fn a_cue_switched_off_is_not_applied() {
    // The age cue off: the question asking the user's age no longer finds where they said it
    // (it shares no word with it), and nothing is explained by an age.
    let dir = crate::common::tempdir();
    let (m, age) = told_age(dir.path(), Cues::ALL.without(Cue::Age));
    for strategy in [Strategy::RERANK, Strategy::ITERATIVE, Strategy::Single] {
        let hits = m
            .retrieve(
                &Query::new("How old was I when Alex was born?")
                    .k(5)
                    .filter(MemoryFilter::new().kind(Kind::Turn)),
                strategy,
            )
            .unwrap();
        assert!(hits.iter().all(|h| h.item.id != age), "{strategy:?}");
        assert!(
            hits.iter().all(|h| h.explain.quantity.is_none()),
            "{strategy:?}"
        );
    }
    // No cue at all: a question asking for advice raises no stated preference, which it
    // raises with every cue on.
    drop(m);
    for cues in [Cues::ALL, Cues::NONE] {
        let dir = crate::common::tempdir();
        let clock = Clock::manual(at("2023-05-30T12:00:00Z"));
        let m = Memory::open(
            dir.path(),
            Options {
                cues,
                ..hashing(256, &clock)
            },
        )
        .unwrap();
        let said = |text: &str| Turn::new("user", text, at("2023-05-24T12:00:00Z"));
        m.remember_conversation(
            "s",
            &[
                said("I went out for dinner at an Italian place downtown"),
                said("I prefer quiet dinner places with vegetarian dishes"),
            ],
            &Scope::default(),
        )
        .unwrap();
        let hits = m
            .retrieve(
                &Query::new("can you suggest a place for dinner for me?")
                    .k(2)
                    .filter(MemoryFilter::new().kind(Kind::Turn)),
                Strategy::RERANK,
            )
            .unwrap();
        let raised = hits
            .iter()
            .filter(|h| h.explain.preference.is_some())
            .count();
        assert_eq!(raised, usize::from(cues == Cues::ALL), "{cues:?}: {hits:?}");
    }
}

#[test]
fn a_question_of_the_users_raises_what_they_said_they_did() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(at("2023-08-14T12:00:00Z"));
    let m = open_with(dir.path(), &clock, None);
    let said = |text: &str| Turn::new("user", text, at("2023-07-15T12:00:00Z"));
    let report = m
        .remember_conversation(
            "s",
            &[
                said("Can you recommend magazines like National Geographic?"),
                said("I've finished five issues of National Geographic this summer"),
            ],
            &Scope::default(),
        )
        .unwrap();
    let turns = MemoryFilter::new().kind(Kind::Turn);
    for strategy in [Strategy::Single, Strategy::Lexical, Strategy::RERANK] {
        let hits = m
            .retrieve(
                &Query::new("How many issues of National Geographic have I read?")
                    .k(2)
                    .filter(turns.clone()),
                strategy,
            )
            .unwrap();
        let deed = hits.iter().find(|h| h.item.id == report.turns[1]).unwrap();
        let why = deed.explain.event.as_ref().expect("explained");
        assert_eq!(why.cue, "i ve finished", "{strategy:?}");
        let other = hits.iter().find(|h| h.item.id == report.turns[0]).unwrap();
        assert!(other.explain.event.is_none(), "{strategy:?}");
        // A question about someone else raises nothing.
        let hits = m
            .retrieve(
                &Query::new("How many issues of National Geographic has Melanie read?")
                    .k(2)
                    .filter(turns.clone()),
                strategy,
            )
            .unwrap();
        assert!(
            hits.iter().all(|h| h.explain.event.is_none()),
            "{strategy:?}"
        );
    }
}
