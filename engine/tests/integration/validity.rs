//! Validity in time: a new version of a fact closes the old one's window where it begins, and
//! `as_of` answers what was true then (superseded versions included when they held).

use memloop::MemoryId;
use memloop::{
    context::ContextRequest, requests::Update, Clock, Kind, Memory, MemoryFilter, NewMemory,
    Options, Query,
};

use crate::common::hashing;

fn open(dir: &std::path::Path, clock: &Clock) -> Memory {
    let options = Options {
        dedup_threshold: Some(0.75),
        ..hashing(256, clock)
    };
    Memory::open(dir, options).unwrap()
}

fn ids_as_of(m: &Memory, query: &str, t: Option<i64>) -> Vec<MemoryId> {
    let mut filter = MemoryFilter::new();
    filter.as_of = t;
    let mut ids: Vec<MemoryId> = m
        .recall(&Query::new(query).k(10).filter(filter.clone()))
        .unwrap()
        .iter()
        .map(|h| h.item.id)
        .collect();
    ids.sort();
    let mut scanned: Vec<MemoryId> = m
        .advanced()
        .scan(&filter, 100)
        .unwrap()
        .iter()
        .map(|i| i.id)
        .collect();
    scanned.sort();
    assert_eq!(ids, scanned, "recall and scan disagree as of {t:?}");
    ids
}

#[test]
fn a_new_version_closes_the_old_window_and_as_of_finds_either() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let (v1, v2);
    {
        let m = open(dir.path(), &clock);
        v1 = m
            .remember(NewMemory::new("alice lives in the city of paris in france").kind(Kind::Fact))
            .unwrap();
        clock.set(5_000).unwrap();
        let done = m
            .remember_explained(
                NewMemory::new("alice lives in the city of berlin in france").kind(Kind::Fact),
            )
            .unwrap();
        v2 = done.id;
        assert_eq!(done.action.previous(), Some(v1));
        let old = m.get(v1).unwrap().unwrap();
        let new = m.get(v2).unwrap().unwrap();
        assert_eq!((old.valid_from, old.valid_until), (1_000, Some(5_000)));
        assert_eq!((new.valid_from, new.valid_until), (5_000, None));
        m.close().unwrap();
    }
    // After a reopen the catalog (validity included) is read back from its records.
    let m = open(dir.path(), &clock);
    assert_eq!(
        ids_as_of(&m, "where does alice live", Some(500)),
        Vec::<MemoryId>::new()
    );
    assert_eq!(
        ids_as_of(&m, "where does alice live", Some(3_000)),
        vec![v1]
    );
    assert_eq!(
        ids_as_of(&m, "where does alice live", Some(5_000)),
        vec![v2]
    );
    assert_eq!(
        ids_as_of(&m, "where does alice live", Some(9_000)),
        vec![v2]
    );
    assert_eq!(ids_as_of(&m, "where does alice live", None), vec![v2]);
    let mut request = ContextRequest::new("where does alice live", 100);
    request.query = request.query.filter(MemoryFilter::new().as_of(3_000));
    let context = m.context(&request).unwrap();
    assert!(context.text.contains("paris"), "{}", context.text);
    assert!(!context.text.contains("berlin"), "{}", context.text);
    // The old version's line says that it no longer holds.
    assert!(
        context
            .text
            .contains("(no longer true since 1970-01-01T00:00:05Z)"),
        "{}",
        context.text
    );
}

#[test]
fn validity_is_settable_on_remember_and_update() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(10_000);
    let m = open(dir.path(), &clock);
    let job = m
        .remember(NewMemory {
            valid_from: Some(2_000),
            valid_until: Some(8_000),
            ..NewMemory::new("bob worked at the bakery on main street").kind(Kind::Fact)
        })
        .unwrap();
    assert_eq!(ids_as_of(&m, "bakery", Some(1_999)), Vec::<MemoryId>::new());
    assert_eq!(ids_as_of(&m, "bakery", Some(2_000)), vec![job]);
    assert_eq!(ids_as_of(&m, "bakery", Some(8_000)), Vec::<MemoryId>::new());
    // Expired but not superseded: still the current version.
    assert_eq!(ids_as_of(&m, "bakery", None), vec![job]);
    // An update with a new text and a start: the old window closes there.
    let next = m
        .update(
            job,
            Update {
                text: Some("bob works at the library on main street".into()),
                valid_from: Some(9_000),
                ..Default::default()
            },
        )
        .unwrap();
    let old = m.get(job).unwrap().unwrap();
    assert_eq!(old.valid_until, Some(8_000), "an earlier end is kept");
    assert_eq!(m.get(next).unwrap().unwrap().valid_from, 9_000);
    assert_eq!(ids_as_of(&m, "main street", Some(9_500)), vec![next]);
    for (from, until) in [(5_000, 5_000), (6_000, 1_000)] {
        let err = m
            .remember(NewMemory {
                valid_from: Some(from),
                valid_until: Some(until),
                ..NewMemory::new("never valid")
            })
            .unwrap_err();
        assert!(
            matches!(
                &err,
                memloop::Error::InvalidInput(e)
                    if matches!(e.reason(), memloop::InvalidInput::Validity { .. })
            ),
            "{err:?}"
        );
    }
}

#[test]
fn an_ended_fact_leaves_working_memory_when_its_validity_ends() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let lease = m
        .remember(NewMemory {
            valid_until: Some(60_000),
            importance: Some(1.0),
            ..NewMemory::new("the office lease on elm road runs until march").kind(Kind::Fact)
        })
        .unwrap();
    let report = m.admin().explain_decay(lease).unwrap();
    assert_eq!(report.demote_at, Some(60_000), "{report:?}");
    assert_eq!(report.valid_until, Some(60_000));
    clock.set(59_999).unwrap();
    assert_eq!(m.admin().sweep().unwrap().demoted, 0);
    clock.set(60_000).unwrap();
    let swept = m.admin().sweep().unwrap();
    assert_eq!((swept.demoted, swept.forgotten), (1, 0));
    let item = m.get(lease).unwrap().unwrap();
    assert_eq!(item.tier, memloop::Tier::LongTerm);
    let events = m.admin().forgotten(0).unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.id == lease && e.reason == memloop::forget::ForgetReason::Expired),
        "{events:?}"
    );
}

/// A newer value of a triple (the same head and relation, another tail) closes the older
/// one's validity when it is written, however far apart the two texts embed (no near
/// duplicate at the threshold): one by one and within a batch; an earlier value told late
/// stands beside the current one; another relation, another user, and facts in plain words
/// (which recall only orders) keep both open; now answers the newest value, as of its time
/// the old one.
#[test]
fn a_newer_value_of_a_triple_closes_the_older_one_when_written() {
    use memloop::RememberAction;
    let dir = crate::common::tempdir();
    let clock = Clock::manual(10_000);
    let options = Options {
        // So high that nothing here is a near duplicate: what closes is the fact's value.
        dedup_threshold: Some(0.999),
        ..hashing(256, &clock)
    };
    let m = Memory::open(dir.path(), options).unwrap();
    let triple = |head: &str, relation: &str, tail: &str, from: i64| {
        let mut n = NewMemory::new(format!("{head} {relation} {tail}"))
            .kind(Kind::Triple)
            .triple(head, relation, tail);
        n.valid_from = Some(from);
        n
    };
    let remember = |n: NewMemory| m.remember_explained(n).unwrap();
    let (t2020, t2022, t2024) = (2_020, 2_022, 2_024);

    // One by one: Berlin (2024) closes Paris (2020) at 2024.
    let paris = remember(triple("Alice", "lives in", "Paris", t2020));
    assert_eq!(paris.action, RememberAction::New);
    let berlin = remember(triple("alice", "Lives in ", "Berlin", t2024));
    assert_eq!(
        berlin.action,
        RememberAction::Superseded { previous: paris.id }
    );
    let old = m.get(paris.id).unwrap().unwrap();
    assert_eq!(old.valid_until, Some(t2024));
    assert_eq!(old.superseded_by, Some(berlin.id));
    assert_eq!(m.get(berlin.id).unwrap().unwrap().valid_until, None);
    let now = ids_as_of(&m, "where does Alice live", None);
    assert!(
        now.contains(&berlin.id) && !now.contains(&paris.id),
        "{now:?}"
    );
    let then = ids_as_of(&m, "where does Alice live", Some(t2022));
    assert!(
        then.contains(&paris.id) && !then.contains(&berlin.id),
        "{then:?}"
    );

    // An earlier value told late (Rome, from 2022, after Berlin from 2024) stands beside.
    let rome = remember(triple("Alice", "lives in", "Rome", t2022));
    assert_eq!(rome.action, RememberAction::New);
    assert!(m.get(berlin.id).unwrap().unwrap().superseded_by.is_none());

    // Another relation of the same head, and another user's value, stay open.
    let works = remember(triple("Alice", "works in", "Lyon", t2024));
    assert_eq!(works.action, RememberAction::New);
    let mut other = triple("Alice", "lives in", "Vienna", t2024 + 1);
    other.user = Some("someone-else".into());
    assert_eq!(remember(other).action, RememberAction::New);
    assert!(m.get(berlin.id).unwrap().unwrap().superseded_by.is_none());

    // Facts in plain words may both hold ("likes tea" / "likes jazz"): none is closed.
    let fact = |text: &str, from: i64| {
        let mut n = NewMemory::new(text).kind(Kind::Fact);
        n.valid_from = Some(from);
        n
    };
    let oslo = remember(fact("Bob lives in Oslo", t2020));
    assert_eq!(
        remember(fact("Bob lives in Bergen", t2024)).action,
        RememberAction::New
    );
    assert!(m.get(oslo.id).unwrap().unwrap().valid_until.is_none());

    // Within one batch, small and large enough to be indexed ahead of its write.
    for padding in [0, 100] {
        let head = format!("Hank{padding}");
        let mut batch = vec![
            triple(&head, "lives in", "Lisbon", t2020),
            triple(&head, "lives in", "Madrid", t2024),
        ];
        batch.extend((0..padding).map(|i| NewMemory::new(format!("pad {i} of {padding}"))));
        let done = m.advanced().remember_batch_explained(batch).unwrap();
        assert_eq!(done[0].action, RememberAction::New);
        assert_eq!(
            done[1].action,
            RememberAction::Superseded {
                previous: done[0].id
            },
            "padding {padding}"
        );
        assert_eq!(m.get(done[0].id).unwrap().unwrap().valid_until, Some(t2024));
    }
    assert!(m.admin().check().unwrap().is_sound());
}
