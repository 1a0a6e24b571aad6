//! Forgetting with the manual clock: tiers at the computed times, reinforcement, capacity,
//! pinning, durability of deletions.

use memloop::{
    forget::ForgetPolicy, forget::ForgetReason, Clock, Kind, Memory, MemoryFilter, NewMemory,
    Options, Query, Scope, Tier,
};

use crate::common::hashing;

const DAY: i64 = 86_400_000;
const T0: i64 = 1_700_000_000_000;

fn options(clock: &Clock, policy: ForgetPolicy) -> Options {
    Options {
        forgetting: policy,
        ..hashing(256, clock)
    }
}

fn one_day_facts() -> ForgetPolicy {
    let mut p = ForgetPolicy::default();
    p.strength_days[Kind::Fact as usize] = 1.0;
    p
}

#[test]
fn a_memory_moves_working_long_term_forgotten_at_the_computed_times() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
    let id = m
        .remember(NewMemory::new("the boiler was serviced").kind(Kind::Fact))
        .unwrap();
    let e = m.admin().explain_decay(id).unwrap();
    assert_eq!(e.tier, Tier::Working);
    assert!((e.value - 0.5).abs() < 1e-9);
    // S = 1 day × (0.5 + importance 0.5); R = 0.5·exp(−τ/S).
    let demote = T0 + (DAY as f64 * (0.5f64 / 0.3).ln()).ceil() as i64;
    let forget = T0 + (DAY as f64 * (0.5f64 / 0.02).ln()).ceil() as i64;
    assert_eq!((e.demote_at, e.forget_at), (Some(demote), Some(forget)));

    clock.set(demote - 1).unwrap();
    assert_eq!(m.admin().sweep().unwrap().demoted, 0);
    clock.set(demote).unwrap();
    let r = m.admin().sweep().unwrap();
    assert_eq!((r.demoted, r.forgotten), (1, 0));
    assert_eq!(m.get(id).unwrap().unwrap().tier, Tier::LongTerm);
    assert_eq!(m.stats().unwrap().long_term, 1);
    // Long-term memories are still searchable (scan: a recall would reinforce it).
    assert_eq!(
        m.advanced().scan(&MemoryFilter::new(), 10).unwrap().len(),
        1
    );

    clock.set(forget - 1).unwrap();
    assert_eq!(m.admin().sweep().unwrap().forgotten, 0);
    clock.set(forget).unwrap();
    assert_eq!(m.admin().sweep().unwrap().forgotten, 1);
    assert!(m.get(id).unwrap().is_none());
    assert!(m.recall(&Query::new("boiler serviced")).unwrap().is_empty());
    let log = m.admin().forgotten(T0).unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (log[0].reason, log[0].at, log[0].threshold),
        (ForgetReason::Demoted, demote, 0.3)
    );
    assert_eq!(
        (log[1].reason, log[1].at, log[1].threshold),
        (ForgetReason::Decayed, forget, 0.02)
    );
    assert!(log[1].value <= 0.02 && log[1].value > 0.0199);
    assert_eq!(log[1].text, "the boiler was serviced");
    assert_eq!(m.admin().forgotten(forget + 1).unwrap().len(), 0);
    drop(m);
    let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
    assert!(
        m.get(id).unwrap().is_none(),
        "a forgotten memory stays forgotten after reopen"
    );
    assert_eq!(m.stats().unwrap().memories, 0);
    assert_eq!(m.admin().forgotten(0).unwrap().len(), 2);
}

#[test]
fn a_recall_reinforces_and_postpones_forgetting() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
    let used = m
        .remember(NewMemory::new("invoices go to accounting").kind(Kind::Fact))
        .unwrap();
    let idle = m
        .remember(NewMemory::new("the parrot likes grapes").kind(Kind::Fact))
        .unwrap();
    let before = m.admin().explain_decay(used).unwrap().forget_at.unwrap();
    clock.set(T0 + DAY / 2).unwrap();
    let hits = m.recall(&Query::new("where do invoices go").k(1)).unwrap();
    assert_eq!(hits[0].item.id, used);
    let after = m.admin().explain_decay(used).unwrap();
    assert_eq!(after.reinforced, 1);
    assert!(
        (after.strength_s - 2.0 * 86_400.0).abs() < 1e-6,
        "S doubled: {}",
        after.strength_s
    );
    assert!(after.forget_at.unwrap() > before + DAY);
    clock.set(before).unwrap();
    let r = m.admin().sweep().unwrap();
    assert_eq!(r.forgotten, 1);
    assert!(m.get(idle).unwrap().is_none());
    assert!(m.get(used).unwrap().is_some());
    // The reinforcement was made durable by the sweep's write.
    drop(m);
    let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
    assert_eq!(m.get(used).unwrap().unwrap().reinforced, 1);
}

/// A recall right after open does not wait for the catalog (loaded in the background), yet its
/// reinforcement reaches it: the reinforced memory outlives the sweep that forgets its peers.
#[test]
fn a_recall_while_the_catalog_loads_still_reinforces() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let (used, idle) = {
        let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
        // Enough memories that the catalog takes a while to load after the reopen.
        let filler: Vec<NewMemory> = (0..8_000)
            .map(|i| NewMemory::new(format!("filler note {i} on shelf {}", i * 7919 % 10007)))
            .collect();
        m.remember_batch(filler).unwrap();
        let used = m
            .remember(NewMemory::new("invoices go to accounting").kind(Kind::Fact))
            .unwrap();
        let idle = m
            .remember(NewMemory::new("the parrot likes grapes").kind(Kind::Fact))
            .unwrap();
        (used, idle)
    };
    let before = {
        let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
        m.admin().explain_decay(used).unwrap().forget_at.unwrap()
    };
    clock.set(T0 + DAY / 2).unwrap();
    let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
    let hits = m
        .recall(&Query::new("invoices go to accounting").k(1))
        .unwrap();
    assert_eq!(hits[0].item.id, used);
    assert_eq!(m.admin().explain_decay(used).unwrap().reinforced, 1);
    clock.set(before).unwrap();
    m.admin().sweep().unwrap();
    assert!(m.get(idle).unwrap().is_none());
    assert!(m.get(used).unwrap().is_some());
}

#[test]
fn capacity_evicts_exactly_the_least_retained() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let policy = ForgetPolicy {
        capacity: Some(5),
        ..ForgetPolicy::default()
    };
    let m = Memory::open(dir.path(), options(&clock, policy)).unwrap();
    let importances = [0.9, 0.2, 0.7, 0.4, 0.95, 0.1, 0.6, 0.8];
    let mut ids = Vec::new();
    for (i, imp) in importances.iter().enumerate() {
        ids.push(
            m.remember(
                NewMemory::new(format!("distinct memory number {i} about topic{i}"))
                    .importance(*imp),
            )
            .unwrap(),
        );
    }
    // Evictions ran automatically with the writes that went over capacity.
    assert_eq!(m.stats().unwrap().memories, 5);
    let mut kept: Vec<f32> = m
        .advanced()
        .scan(&MemoryFilter::new(), 10)
        .unwrap()
        .iter()
        .map(|i| i.importance)
        .collect();
    kept.sort_by(f32::total_cmp);
    assert_eq!(kept, [0.6, 0.7, 0.8, 0.9, 0.95]);
    let evicted: Vec<_> = m
        .admin()
        .forgotten(0)
        .unwrap()
        .into_iter()
        .filter(|e| e.reason == ForgetReason::Evicted)
        .collect();
    assert_eq!(evicted.len(), 3);
}

#[test]
fn per_namespace_capacity_and_pinned_memories() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let policy = ForgetPolicy {
        capacity_per_namespace: Some(2),
        ..one_day_facts()
    };
    let m = Memory::open(dir.path(), options(&clock, policy)).unwrap();
    let pinned = m
        .remember(
            NewMemory::new("the door code is 4711")
                .kind(Kind::Fact)
                .namespace("a")
                .pinned(true),
        )
        .unwrap();
    for i in 0..4 {
        m.remember(
            NewMemory::new(format!("note {i} about subject{i}"))
                .namespace("a")
                .importance(0.1 * (i + 1) as f32),
        )
        .unwrap();
        m.remember(NewMemory::new(format!("other {i} about thing{i}")).namespace("b"))
            .unwrap();
    }
    let a = m
        .advanced()
        .scan(&MemoryFilter::new().namespace("a"), 10)
        .unwrap();
    let b = m
        .advanced()
        .scan(&MemoryFilter::new().namespace("b"), 10)
        .unwrap();
    // Pinned memories are never evicted: "a" keeps it plus the most important one.
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(a.iter().any(|i| i.id == pinned));
    assert_eq!(b.len(), 2);
    clock.set(T0 + 10_000 * DAY).unwrap();
    m.admin().sweep().unwrap();
    assert!(
        m.get(pinned).unwrap().is_some(),
        "pinned memories never decay"
    );
    assert_eq!(m.admin().explain_decay(pinned).unwrap().forget_at, None);
    assert_eq!(m.stats().unwrap().memories, 1);
}

#[test]
fn disabled_forgetting_keeps_everything() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let m = Memory::open(dir.path(), options(&clock, ForgetPolicy::disabled())).unwrap();
    m.remember(NewMemory::new("kept forever")).unwrap();
    clock.set(T0 + 100_000 * DAY).unwrap();
    assert_eq!(
        m.admin().sweep().unwrap(),
        memloop::answers::SweepReport {
            at: T0 + 100_000 * DAY,
            ..Default::default()
        }
    );
    assert_eq!(m.stats().unwrap().memories, 1);
    let bad = ForgetPolicy {
        working_threshold: 0.01,
        forget_threshold: 0.5,
        ..Default::default()
    };
    assert!(matches!(
        Memory::open(crate::common::tempdir().path(), options(&clock, bad)),
        Err(memloop::Error::InvalidInput(_))
    ));
}

#[test]
fn per_user_capacity_evicts_each_users_least_retained_only() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let policy = ForgetPolicy {
        capacity_per_user: Some(3),
        ..ForgetPolicy::default()
    };
    let m = Memory::open(dir.path(), options(&clock, policy)).unwrap();
    let importances = [0.9, 0.2, 0.7, 0.4, 0.95];
    for user in ["ana", "bo"] {
        for (i, imp) in importances.iter().enumerate() {
            m.remember(
                NewMemory::new(format!("{user} note number {i} about topic{i}"))
                    .importance(*imp)
                    .scope(Scope::user(user)),
            )
            .unwrap();
        }
    }
    // Memories of no user are not counted against anyone.
    for i in 0..5 {
        m.remember(NewMemory::new(format!("shared note {i} on theme{i}")).importance(0.05))
            .unwrap();
    }
    for user in ["ana", "bo"] {
        let mut kept: Vec<f32> = m
            .advanced()
            .scan(&MemoryFilter::new().scope(Scope::user(user)), 10)
            .unwrap()
            .iter()
            .map(|i| i.importance)
            .collect();
        kept.sort_by(f32::total_cmp);
        assert_eq!(kept, [0.7, 0.9, 0.95], "{user}");
    }
    assert_eq!(
        m.advanced().scan(&MemoryFilter::new(), 100).unwrap().len(),
        3 + 3 + 5
    );
}

#[test]
fn a_scoped_sweep_moves_only_that_scopes_memories() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(T0);
    let m = Memory::open(dir.path(), options(&clock, one_day_facts())).unwrap();
    let mut ids = Vec::new();
    for user in ["ana", "bo"] {
        ids.push(
            m.remember(
                NewMemory::new(format!("{user} prefers window seats"))
                    .kind(Kind::Fact)
                    .scope(Scope::user(user)),
            )
            .unwrap(),
        );
    }
    // Past θ2 for both (one-day facts, ten days on), but only Ana's scope is swept.
    clock.set(T0 + 10 * DAY).unwrap();
    let report = m.scoped(&Scope::user("ana")).sweep().unwrap();
    assert_eq!(report.forgotten, 1);
    assert!(m.get(ids[0]).unwrap().is_none());
    assert!(
        m.get(ids[1]).unwrap().is_some(),
        "bo's memory waits for a sweep of its own"
    );
    assert_eq!(
        m.scoped(&Scope::user("nobody")).sweep().unwrap().forgotten,
        0
    );
    // An empty name is refused; the empty scope (no confinement) sweeps everything.
    assert!(m.scoped(&Scope::user("")).sweep().is_err());
    assert_eq!(m.admin().sweep().unwrap().forgotten, 1);
    assert!(m.get(ids[1]).unwrap().is_none());
}
