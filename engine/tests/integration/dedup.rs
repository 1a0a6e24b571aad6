//! No duplicates, no lost history: exact and near-duplicate merging, versioned updates.

use memloop::{
    requests::Update, Clock, Error, Kind, Memory, MemoryFilter, MemoryId, NewMemory, Options,
    Query, RememberAction, Remembered, Scope,
};

use crate::common::open;

#[test]
fn exact_duplicates_merge_with_count_newest_metadata_and_provenance() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let a = m
        .remember(
            NewMemory::new("Paris is the capital of France")
                .kind(Kind::Fact)
                .tag("geo")
                .source("atlas", Some((0, 30))),
        )
        .unwrap();
    clock.advance(10).unwrap();
    let b = m
        .remember(
            NewMemory::new("Paris is the capital of France")
                .kind(Kind::Fact)
                .tag("europe")
                .importance(0.9)
                .source("wiki", None),
        )
        .unwrap();
    assert_eq!(a, b);
    let item = m.get(a).unwrap().unwrap();
    assert_eq!(item.count, 2);
    assert_eq!(item.tags, ["europe", "geo"]);
    assert_eq!(item.importance, 0.9);
    assert_eq!(item.sources.len(), 2);
    assert_eq!((item.created, item.updated), (1_000, 1_010));
    // Another kind or namespace is another memory.
    let c = m
        .remember(NewMemory::new("Paris is the capital of France"))
        .unwrap();
    let d = m
        .remember(
            NewMemory::new("Paris is the capital of France")
                .kind(Kind::Fact)
                .namespace("other"),
        )
        .unwrap();
    assert_eq!(
        [c, d].iter().filter(|&&x| x != a).count(),
        2,
        "kind and namespace separate memories"
    );
    assert_eq!(m.stats().unwrap().memories, 3);
}

#[test]
fn near_duplicates_merge_within_namespace_and_kind_only() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    let m = open(dir.path(), &clock);
    let a = m
        .remember(NewMemory::new(
            "the quick brown fox jumps over the lazy dog today",
        ))
        .unwrap();
    // Same words, different punctuation and case: identical hashing vectors, different hash.
    let b = m
        .remember(NewMemory::new(
            "The quick brown fox jumps over the lazy dog, today!",
        ))
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(m.get(a).unwrap().unwrap().count, 2);
    let other_ns = m
        .remember(
            NewMemory::new("The quick brown fox jumps over the lazy dog, today!").namespace("x"),
        )
        .unwrap();
    assert_ne!(other_ns, a);
    let different = m
        .remember(NewMemory::new(
            "a completely unrelated sentence about taxes",
        ))
        .unwrap();
    assert_ne!(different, a);
}

/// The near-duplicate search looks past other places' equally close memories: two hundred users
/// hold the same sentence (identical vectors under the hashing embedder), stored before the
/// one user the new memory belongs to, so an unfiltered search's best hits are all theirs.
#[test]
fn a_near_duplicate_is_found_behind_many_equal_ones_of_other_places() {
    let dir = crate::common::tempdir();
    let m = open(dir.path(), &Clock::manual(0));
    let text = "the quick brown fox jumps over the lazy dog today";
    let others: Vec<NewMemory> = (0..200)
        .map(|u| NewMemory::new(text).scope(Scope::user(format!("user {u}"))))
        .collect();
    m.remember_batch(others).unwrap();
    let mine = m
        .remember(NewMemory::new(text).scope(Scope::user("me")))
        .unwrap();
    // Different punctuation: no exact duplicate, the same vector.
    let again = m
        .remember_explained(
            NewMemory::new("The quick brown fox jumps over the lazy dog, today!")
                .scope(Scope::user("me")),
        )
        .unwrap();
    assert_eq!(again.id, mine);
    assert_eq!(again.action, RememberAction::Merged);
    assert_eq!(m.get(mine).unwrap().unwrap().count, 2);
    assert_eq!(m.stats().unwrap().memories, 201);
    // In a large batch, whose inserts report what they find near each memory: every item the
    // insert's search keeps is an equal copy, and the place's own lies behind them.
    let mut batch: Vec<NewMemory> = crate::common::sentences(100)
        .into_iter()
        .map(NewMemory::new)
        .collect();
    batch.insert(
        50,
        NewMemory::new("THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG TODAY.")
            .scope(Scope::user("me")),
    );
    let done = m.advanced().remember_batch_explained(batch).unwrap();
    assert_eq!(
        (done[50].id, done[50].action),
        (mine, RememberAction::Merged)
    );
    assert_eq!(m.get(mine).unwrap().unwrap().count, 3);
    let stats = m.stats().unwrap();
    assert_eq!((stats.memories, stats.indexed), (301, 301));
}

/// Inside one batch too, a near-duplicate that says something else is never merged: a fact
/// supersedes its earlier version, a chunk stands beside it; the report says which.
#[test]
fn near_duplicates_that_differ_are_new_versions_or_new_memories() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    let options = Options {
        dedup_threshold: Some(0.75),
        ..crate::common::hashing(256, &clock)
    };
    let m = Memory::open(dir.path(), options).unwrap();
    let done = m
        .advanced()
        .remember_batch_explained(vec![
            NewMemory::new("the office wifi password is swordfish today").kind(Kind::Fact),
            NewMemory::new("the office wifi password is marlin today").kind(Kind::Fact),
            NewMemory::new("the team lunch happens on friday at noon"),
            NewMemory::new("the team lunch happens on monday at noon"),
            NewMemory::new("The office WiFi password is marlin, today!").kind(Kind::Fact),
        ])
        .unwrap();
    let actions: Vec<RememberAction> = done.iter().map(|d| d.action).collect();
    assert_eq!(
        actions,
        [
            RememberAction::New,
            RememberAction::Superseded {
                previous: done[0].id
            },
            RememberAction::New,
            RememberAction::New,
            RememberAction::Merged,
        ]
    );
    assert_eq!(done[4].id, done[1].id);
    let old = m.get(done[0].id).unwrap().unwrap();
    assert_eq!(old.superseded_by, Some(done[1].id));
    assert_eq!(m.get(done[1].id).unwrap().unwrap().count, 2);
    assert_eq!(m.stats().unwrap().memories, 4, "nothing was dropped");
    // The history survives a reopen.
    drop(m);
    let m = Memory::open(dir.path(), crate::common::hashing(256, &clock)).unwrap();
    assert_eq!(
        m.get(done[0].id).unwrap().unwrap().superseded_by,
        Some(done[1].id)
    );
}

/// `done` with every id (its own and a superseded version's) replaced by its rank among the
/// ids it names. Ids grow in the order memories are made, but a large batch's memory that
/// merges after all leaves the id it was indexed under unused.
fn ranked(done: &[Remembered]) -> Vec<(usize, RememberAction)> {
    let mut ids: Vec<MemoryId> = done
        .iter()
        .flat_map(|d| [Some(d.id), d.action.previous()])
        .flatten()
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let rank = |id: MemoryId| ids.binary_search(&id).unwrap();
    done.iter()
        .map(|d| {
            let action = match d.action {
                RememberAction::Superseded { previous } => RememberAction::Superseded {
                    previous: MemoryId::new(rank(previous) as u64),
                },
                a => a,
            };
            (rank(d.id), action)
        })
        .collect()
}

/// A large batch goes into the index ahead of its writes, its near duplicates found by the
/// inserts; the result must be what the same memories remembered one at a time (each searched
/// for its near duplicates) give: the same actions and versions, the same memories in the same
/// order, whether the near duplicate is stored already or earlier in the batch. The index then
/// holds exactly the stored memories.
#[test]
fn a_large_batch_decides_as_one_memory_at_a_time_does() {
    let clock = Clock::manual(0);
    let options = || Options {
        dedup_threshold: Some(0.75),
        ..crate::common::hashing(256, &clock)
    };
    let stored = [
        NewMemory::new("the office wifi password is swordfish today").kind(Kind::Fact),
        NewMemory::new("the team lunch happens on friday at noon"),
    ];
    let mut batch: Vec<NewMemory> = crate::common::sentences(300)
        .into_iter()
        .map(NewMemory::new)
        .collect();
    // Near duplicates of stored memories and of earlier batch memories, spread through the
    // batch's chunks.
    batch.insert(
        40,
        NewMemory::new("the office wifi password is marlin today").kind(Kind::Fact),
    );
    batch.insert(
        100,
        NewMemory::new("the team lunch happens on monday at noon"),
    );
    batch.insert(
        150,
        NewMemory::new("the deploy key rotates every tuesday night").kind(Kind::Fact),
    );
    batch.insert(
        230,
        NewMemory::new("the deploy key rotates every thursday night").kind(Kind::Fact),
    );
    batch.insert(
        290,
        NewMemory::new("The office WiFi password is marlin, today!").kind(Kind::Fact),
    );
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let together = {
        let m = Memory::open(a.path(), options()).unwrap();
        m.remember_batch(stored.to_vec()).unwrap();
        let done = m
            .advanced()
            .remember_batch_explained(batch.clone())
            .unwrap();
        let stats = m.stats().unwrap();
        assert_eq!(
            stats.indexed, stats.memories,
            "merged memories left the index"
        );
        assert!(m.admin().check().unwrap().is_sound());
        done
    };
    let one_by_one: Vec<_> = {
        let m = Memory::open(b.path(), options()).unwrap();
        m.remember_batch(stored.to_vec()).unwrap();
        batch
            .iter()
            .map(|n| {
                m.advanced()
                    .remember_batch_explained(vec![n.clone()])
                    .unwrap()[0]
            })
            .collect()
    };
    assert_eq!(ranked(&together), ranked(&one_by_one));
    assert!(together
        .windows(2)
        .all(|w| w[0].id <= w[1].id || w[1].action == RememberAction::Merged));
    let actions = |a: RememberAction| together.iter().filter(|d| d.action == a).count();
    assert!(actions(RememberAction::Merged) >= 1, "{together:?}");
    assert!(
        together
            .iter()
            .filter(|d| matches!(d.action, RememberAction::Superseded { .. }))
            .count()
            >= 2,
        "{together:?}"
    );
}

/// A fact superseded earlier in a batch is no longer current for the batch's later memories:
/// a second near copy of it that is not near the new version stands on its own, as it does
/// when the two are remembered one at a time. Small batches and large ones alike.
#[test]
fn a_fact_superseded_in_a_batch_is_not_superseded_again() {
    let dim = 256;
    let axis = |i: usize, x: f32| {
        let mut v = vec![0.0; dim];
        v[i] = x;
        v
    };
    let plus =
        |a: Vec<f32>, b: Vec<f32>| -> Vec<f32> { a.iter().zip(&b).map(|(x, y)| x + y).collect() };
    // cos(s, a) = cos(s, b) ≈ 0.958, cos(a, b) ≈ 0.917: a and b are near s, not near each other.
    let s = axis(0, 1.0);
    let a = plus(axis(0, 1.0), axis(1, 0.3));
    let b = plus(axis(0, 1.0), axis(2, 0.3));
    let fact = |t: &str| NewMemory::new(t).kind(Kind::Fact);
    for padding in [0, 100] {
        let dir = crate::common::tempdir();
        let m = open(dir.path(), &Clock::manual(0));
        let stored = m
            .advanced()
            .remember_embedded(vec![(fact("the gate code is 1234"), s.clone())])
            .unwrap()[0];
        let mut batch = vec![
            (fact("the gate code is 5678"), a.clone()),
            (fact("the gate code is 9012"), b.clone()),
        ];
        // Unrelated memories make the batch large enough to be indexed ahead of its write.
        batch.extend((0..padding).map(|i| (NewMemory::new(format!("pad {i}")), axis(10 + i, 1.0))));
        let ids = m.advanced().remember_embedded(batch).unwrap();
        let (first, second) = (
            m.get(ids[0]).unwrap().unwrap(),
            m.get(ids[1]).unwrap().unwrap(),
        );
        assert_eq!(first.supersedes, Some(stored), "padding {padding}");
        assert_eq!(second.supersedes, None, "padding {padding}");
        assert_eq!(m.get(stored).unwrap().unwrap().superseded_by, Some(ids[0]));
        assert!(second.superseded_by.is_none() && first.superseded_by.is_none());
    }
}

#[test]
fn duplicates_inside_one_batch_merge_too() {
    let dir = crate::common::tempdir();
    let m = open(dir.path(), &Clock::manual(0));
    let ids = m
        .remember_batch(vec![
            NewMemory::new("alpha beta gamma"),
            NewMemory::new("delta epsilon"),
            NewMemory::new("alpha beta gamma"),
            NewMemory::new("Alpha, beta, gamma."),
        ])
        .unwrap();
    assert_eq!(ids[0], ids[2]);
    assert_eq!(ids[0], ids[3]);
    assert_ne!(ids[0], ids[1]);
    assert_eq!(m.get(ids[0]).unwrap().unwrap().count, 3);
    assert_eq!(m.stats().unwrap().memories, 2);
}

#[test]
fn updating_text_keeps_the_old_version_superseded_and_linked() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    let m = open(dir.path(), &clock);
    let old = m
        .remember(NewMemory::new("the office is on floor three").kind(Kind::Fact))
        .unwrap();
    clock.advance(5).unwrap();
    let new = m
        .update(
            old,
            Update {
                text: Some("the office moved to floor seven".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_ne!(old, new);
    let (o, n) = (m.get(old).unwrap().unwrap(), m.get(new).unwrap().unwrap());
    assert_eq!(o.superseded_by, Some(new));
    assert_eq!(n.supersedes, Some(old));
    assert_eq!(o.text, "the office is on floor three");
    // Out of default ranking, retrievable on request.
    let q = Query::new("office floor three").k(5);
    assert!(m.recall(&q).unwrap().iter().all(|h| h.item.id != old));
    let all = m
        .recall(
            &q.clone()
                .filter(MemoryFilter::new().include_superseded(true)),
        )
        .unwrap();
    assert_eq!(all[0].item.id, old);
    // The superseded version cannot be updated; metadata updates stay in place.
    assert!(matches!(
        m.update(old, Update::default()),
        Err(Error::InvalidInput(_))
    ));
    let same = m
        .update(
            new,
            Update {
                importance: Some(0.8),
                tags: Some(vec!["hr".into()]),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(same, new);
    assert_eq!(m.get(new).unwrap().unwrap().tags, ["hr"]);
    // Remembering the old text again is a new current memory, not a merge into history.
    let again = m
        .remember(NewMemory::new("the office is on floor three").kind(Kind::Fact))
        .unwrap();
    assert!(again != old && again != new);
}

#[test]
fn forget_removes_from_store_and_recall_and_bad_input_is_typed() {
    let dir = crate::common::tempdir();
    let m = open(dir.path(), &Clock::manual(0));
    let id = m
        .remember(NewMemory::new("ephemeral note about kiwis"))
        .unwrap();
    m.forget(id).unwrap();
    assert!(m.get(id).unwrap().is_none());
    assert!(m.recall(&Query::new("kiwis")).unwrap().is_empty());
    assert!(matches!(m.forget(id), Err(Error::NotFound(x)) if x == id));
    assert!(matches!(
        m.remember(NewMemory::new("  ")),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        m.remember(NewMemory::new("x").importance(1.5)),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        m.recall(&Query::new("x").k(0)),
        Err(Error::InvalidInput(_))
    ));
    assert!(matches!(
        m.recall(&Query::new("")),
        Err(Error::InvalidInput(_))
    ));
    let bad = m
        .advanced()
        .remember_embedded(vec![(NewMemory::new("v"), vec![0.0; 64])]);
    assert!(matches!(bad, Err(Error::InvalidInput(_))));
    let bad = m
        .advanced()
        .remember_embedded(vec![(NewMemory::new("v"), vec![1.0; 3])]);
    assert!(matches!(bad, Err(Error::InvalidInput(_))));
    // A failed batch writes nothing.
    let before = m.stats().unwrap().memories;
    assert!(m
        .remember_batch(vec![NewMemory::new("fine"), NewMemory::new("")])
        .is_err());
    assert_eq!(m.stats().unwrap().memories, before);
}
