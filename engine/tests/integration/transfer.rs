//! Export and import: same items, same recall, idempotent, re-embedding across models.

use memloop::MemoryId;
use memloop::{requests::Update, Clock, Error, Kind, Memory, MemoryFilter, NewMemory, Query};

use crate::common::{hashing, open, sentences};

fn top_ids(m: &Memory, queries: &[String]) -> Vec<Vec<MemoryId>> {
    queries
        .iter()
        .map(|q| {
            let mut query = Query::new(q.as_str()).k(5);
            query.ef = Some(500);
            m.recall(&query)
                .unwrap()
                .iter()
                .map(|h| h.item.id)
                .collect()
        })
        .collect()
}

#[test]
fn export_import_round_trip_is_identical_and_idempotent() {
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let clock = Clock::manual(10);
    let src = open(a.path(), &clock);
    let texts = sentences(400);
    src.remember_batch(
        texts
            .iter()
            .map(|t| NewMemory::new(t.as_str()).tag("t"))
            .collect(),
    )
    .unwrap();
    let fact = src
        .remember(NewMemory::new("the cafe opens at eight").kind(Kind::Fact))
        .unwrap();
    let newer = src
        .update(
            fact,
            Update {
                text: Some("the cafe opens at nine".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let file = a.path().join("export.mlx");
    assert_eq!(
        src.transfer().export(&file, &MemoryFilter::new()).unwrap(),
        402
    );

    let dst = open(b.path(), &clock);
    let r = dst.transfer().import(&file).unwrap();
    assert_eq!(
        (r.records, r.added, r.merged, r.unchanged, r.reembedded),
        (402, 402, 0, 0, false)
    );
    let all = MemoryFilter::new().include_superseded(true);
    assert_eq!(
        src.advanced().scan(&all, usize::MAX).unwrap(),
        dst.advanced().scan(&all, usize::MAX).unwrap()
    );
    let queries: Vec<String> = texts.iter().step_by(23).cloned().collect();
    assert_eq!(top_ids(&src, &queries), top_ids(&dst, &queries));
    assert_eq!(dst.get(fact).unwrap().unwrap().superseded_by, Some(newer));

    let again = dst.transfer().import(&file).unwrap();
    assert_eq!((again.added, again.merged, again.unchanged), (0, 0, 402));
    assert_eq!(dst.stats().unwrap().memories, 402);
}

#[test]
fn import_merges_newer_metadata_and_remaps_taken_ids() {
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let clock = Clock::manual(0);
    let src = open(a.path(), &clock);
    let dst = open(b.path(), &clock);
    let local = dst
        .remember(NewMemory::new("shared memory text").tag("old"))
        .unwrap();
    let taken = dst.remember(NewMemory::new("only local")).unwrap();
    clock.advance(100).unwrap();
    src.remember(NewMemory::new("filler one two")).unwrap();
    src.remember(NewMemory::new("shared memory text").tag("new"))
        .unwrap();
    src.remember(NewMemory::new("only remote")).unwrap();
    let file = a.path().join("x.mlx");
    src.transfer().export(&file, &MemoryFilter::new()).unwrap();
    let r = dst.transfer().import(&file).unwrap();
    assert_eq!((r.added, r.merged), (2, 1));
    assert_eq!(dst.get(local).unwrap().unwrap().tags, ["new"]);
    assert_eq!(dst.get(taken).unwrap().unwrap().text, "only local");
    let remote = dst.recall(&Query::new("only remote").k(1)).unwrap();
    assert_eq!(remote[0].item.text, "only remote");
    assert!(remote[0].item.id > taken);
}

#[test]
fn importing_from_another_model_re_embeds() {
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let clock = Clock::manual(0);
    let src = Memory::open(a.path(), hashing(48, &clock)).unwrap();
    let texts = sentences(100);
    src.remember_batch(texts.iter().map(NewMemory::new).collect())
        .unwrap();
    let file = a.path().join("x.mlx");
    src.transfer().export(&file, &MemoryFilter::new()).unwrap();
    let dst = open(b.path(), &clock);
    let r = dst.transfer().import(&file).unwrap();
    assert!(r.reembedded);
    assert_eq!(r.added, 100);
    for t in texts.iter().step_by(9) {
        assert_eq!(
            &dst.recall(&Query::new(t.as_str()).k(1)).unwrap()[0]
                .item
                .text,
            t
        );
    }
}

#[test]
fn damaged_export_files_are_rejected_before_anything_is_imported() {
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let clock = Clock::manual(0);
    let src = open(a.path(), &clock);
    src.remember_batch(sentences(20).iter().map(NewMemory::new).collect())
        .unwrap();
    let file = a.path().join("x.mlx");
    src.transfer().export(&file, &MemoryFilter::new()).unwrap();
    let good = std::fs::read(&file).unwrap();
    let dst = open(b.path(), &clock);
    let bad = b.path().join("bad.mlx");
    let mut cases = vec![
        good[..good.len() - 3].to_vec(),
        good[..40].to_vec(),
        b"nope".to_vec(),
    ];
    for at in [9, 60, good.len() / 2, good.len() - 2] {
        let mut flipped = good.clone();
        flipped[at] ^= 0x40;
        cases.push(flipped);
    }
    let mut longer = good.clone();
    longer.push(0);
    cases.push(longer);
    for (i, bytes) in cases.iter().enumerate() {
        std::fs::write(&bad, bytes).unwrap();
        let err = dst.transfer().import(&bad).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Corrupt { .. } | Error::UnsupportedVersion { .. }
            ),
            "case {i}: {err}"
        );
        assert_eq!(dst.stats().unwrap().memories, 0, "case {i}");
    }
}
