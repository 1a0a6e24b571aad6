//! Validity in time: a new version of a fact closes the old one's window where it begins, and
//! `as_of` answers what was true then (superseded versions included when they held).

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

fn ids_as_of(m: &Memory, query: &str, t: Option<i64>) -> Vec<u64> {
    let mut filter = MemoryFilter::new();
    filter.as_of = t;
    let mut ids: Vec<u64> = m
        .recall(&Query::new(query).k(10).filter(filter.clone()))
        .unwrap()
        .iter()
        .map(|h| h.item.id)
        .collect();
    ids.sort();
    let mut scanned: Vec<u64> = m
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
        Vec::<u64>::new()
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
    assert_eq!(ids_as_of(&m, "bakery", Some(1_999)), Vec::<u64>::new());
    assert_eq!(ids_as_of(&m, "bakery", Some(2_000)), vec![job]);
    assert_eq!(ids_as_of(&m, "bakery", Some(8_000)), Vec::<u64>::new());
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
