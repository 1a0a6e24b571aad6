//! Convergence: 3 to 5 replicas, clocks up to an hour apart, random operations (remember,
//! update, metadata, feedback, reinforcement, forget, sweep, erase a user), pushes and partial
//! pulls in random orders (a pull that reaches only some devices' segments is a partition; a
//! pull killed before it records its progress applies the same changes again);
//! then every device pushes and pulls everything. Every replica must hold the same state and
//! the same view, and every version any device made must be there, live unless a tombstone
//! names it; an erasure takes every version of its scope its eraser held, and no version
//! made by a device that had seen the erasure. The devices stamp and erase by the functions
//! the engine runs ([`created_after`], [`erasure_bound`], [`erases`]).
//! `PROPTEST_CASES=10000` for the closing run (256 by default).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::model::*;
use super::*;
use crate::item::scope_covers;

type Body = String;
type Meta = Vec<String>;
type C = Change<Body, Meta>;

const USERS: [&str; 3] = ["ana", "bob", "cy"];
const HOUR: i64 = 3_600_000;

#[derive(Debug, Clone)]
enum Op {
    Remember { user: Option<usize> },
    Update { pick: usize },
    Tag { pick: usize, tag: u8 },
    Feedback { pick: usize, level: u8 },
    Reinforce { pick: usize },
    Forget { pick: usize },
    Sweep { pick: usize },
    Erase { user: usize },
}

#[derive(Debug, Clone)]
enum Step {
    Local {
        device: usize,
        op: Op,
    },
    Push {
        device: usize,
    },
    /// Pull the segments of the devices whose bits are set (the others unreachable).
    Pull {
        device: usize,
        reach: u8,
    },
    /// A pull killed after it applied the changes but before it recorded how far it got: the
    /// next pull applies them again.
    KilledPull {
        device: usize,
        reach: u8,
    },
    Advance {
        ms: i64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::option::of(0..USERS.len()).prop_map(|user| Op::Remember { user }),
        3 => any::<usize>().prop_map(|pick| Op::Update { pick }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(pick, tag)| Op::Tag { pick, tag }),
        2 => (any::<usize>(), 1u8..=5).prop_map(|(pick, level)| Op::Feedback { pick, level }),
        1 => any::<usize>().prop_map(|pick| Op::Reinforce { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Forget { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Sweep { pick }),
        1 => (0..USERS.len()).prop_map(|user| Op::Erase { user }),
    ]
}

fn step(devices: usize) -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..devices, op()).prop_map(|(device, op)| Step::Local { device, op }),
        2 => (0..devices).prop_map(|device| Step::Push { device }),
        3 => (0..devices, any::<u8>()).prop_map(|(device, reach)| Step::Pull { device, reach }),
        1 => (0..devices, any::<u8>()).prop_map(|(device, reach)| Step::KilledPull { device, reach }),
        1 => (0i64..120_000).prop_map(|ms| Step::Advance { ms }),
    ]
}

fn scenario() -> impl Strategy<Value = (Vec<i64>, Vec<Step>)> {
    (3usize..=5).prop_flat_map(|n| {
        (
            proptest::collection::vec(-HOUR..=HOUR, n),
            proptest::collection::vec(step(n), 0..160),
        )
    })
}

/// One device: its clock (skewed), its replica, the changes it made (pushed up to `pushed`),
/// how far it pulled each device's segment, and its own counters.
struct Device {
    id: DeviceId,
    skew: i64,
    clock: HlcClock,
    replica: Replica<Body, Meta>,
    made: Vec<C>,
    pushed: usize,
    pulled: BTreeMap<usize, usize>,
    next_local: u64,
    counts: BTreeMap<GlobalId, Counts>,
    /// Every erasure it has applied (made here or pulled).
    seen: BTreeSet<ErasureBound>,
}

impl Device {
    /// A new version id of this device.
    fn mint(&mut self) -> GlobalId {
        self.next_local += 1;
        GlobalId {
            origin: self.id,
            local: self.next_local - 1,
        }
    }

    /// Version `id` of `lineage` made now (`wall`, this device's clock) in `scope`: stamped
    /// and created as the engine does ([`created_after`] the erasures seen here).
    fn version(
        &mut self,
        id: GlobalId,
        lineage: GlobalId,
        wall: i64,
        scope: ErasedScope,
        body: Body,
    ) -> Version<Body> {
        let seen: Vec<ErasureBound> = self.seen.iter().cloned().collect();
        Version {
            id,
            lineage,
            made: self.clock.tick(wall),
            created: created_after(wall, &seen, scope_fields(&scope)),
            scope,
            body,
        }
    }
}

/// What the whole run made: every version, for the no-write-lost check.
struct World {
    devices: Vec<Device>,
    /// The bucket: each device's pushed changes in order (its segments).
    bucket: Vec<Vec<C>>,
    now: i64,
    versions: Vec<Version<Body>>,
    /// Each version's id with the erasures its maker had seen when it made it.
    seen_at_making: BTreeMap<GlobalId, BTreeSet<ErasureBound>>,
    /// Each erasure with the versions its maker held when it made it.
    held_at_erasing: Vec<(ErasureBound, Vec<GlobalId>)>,
}

impl World {
    fn new(skews: &[i64]) -> World {
        let devices = skews
            .iter()
            .enumerate()
            .map(|(i, &skew)| {
                // Device ids are random in a store; here apart and not in index order.
                let id = 0x9e37_79b9_u64.wrapping_mul(i as u64 + 7);
                Device {
                    id,
                    skew,
                    clock: HlcClock::new(id, Hlc::default()),
                    replica: Replica::default(),
                    made: Vec::new(),
                    pushed: 0,
                    pulled: BTreeMap::new(),
                    next_local: 1,
                    counts: BTreeMap::new(),
                    seen: BTreeSet::new(),
                }
            })
            .collect::<Vec<_>>();
        World {
            bucket: vec![Vec::new(); devices.len()],
            devices,
            now: 1_767_225_600_000,
            versions: Vec::new(),
            seen_at_making: BTreeMap::new(),
            held_at_erasing: Vec::new(),
        }
    }

    fn local(&mut self, d: usize, op: &Op) {
        let wall = self.now + self.devices[d].skew;
        let dev = &mut self.devices[d];
        let view = dev.replica.view();
        let picked = |pick: usize| -> Option<GlobalId> {
            (!view.is_empty()).then(|| *view.keys().nth(pick % view.len()).expect("in range"))
        };
        let change = match op {
            Op::Remember { user } => {
                let id = dev.mint();
                let scope = [user.map(|u| USERS[u].to_string()), None, None];
                let v = dev.version(id, id, wall, scope, format!("memory {id:?}"));
                self.versions.push(v.clone());
                self.seen_at_making.insert(v.id, dev.seen.clone());
                Change::Version(v)
            }
            Op::Update { pick } => {
                let Some(lineage) = picked(*pick) else { return };
                let current = view[&lineage].current;
                let scope = dev.replica.version(&current).expect("held").scope.clone();
                let id = dev.mint();
                let body = format!("update {id:?} of {lineage:?}");
                let v = dev.version(id, lineage, wall, scope, body);
                self.versions.push(v.clone());
                self.seen_at_making.insert(v.id, dev.seen.clone());
                Change::Version(v)
            }
            Op::Tag { pick, tag } => {
                let Some(lineage) = picked(*pick) else { return };
                Change::Meta {
                    id: view[&lineage].current,
                    at: dev.clock.tick(wall),
                    meta: vec![format!("t{tag}")],
                }
            }
            Op::Feedback { pick, level } => {
                let Some(lineage) = picked(*pick) else { return };
                let id = view[&lineage].current;
                let c = dev.counts.entry(id).or_default();
                c.feedback += 1;
                c.level_sum += u32::from(*level);
                Change::Counts {
                    id,
                    device: dev.id,
                    counts: *c,
                }
            }
            Op::Reinforce { pick } => {
                let Some(lineage) = picked(*pick) else { return };
                let id = view[&lineage].current;
                let c = dev.counts.entry(id).or_default();
                c.reinforced += 1;
                Change::Counts {
                    id,
                    device: dev.id,
                    counts: *c,
                }
            }
            Op::Forget { pick } | Op::Sweep { pick } => {
                let Some(lineage) = picked(*pick) else { return };
                Change::Forget {
                    id: view[&lineage].current,
                    at: dev.clock.tick(wall),
                }
            }
            Op::Erase { user } => {
                let scope = [Some(USERS[*user].to_string()), None, None];
                // What it takes here: the scope's live versions (the engine erases what its
                // catalog holds), the newest of which bounds it.
                let held: Vec<&Version<Body>> = view
                    .values()
                    .flat_map(|m| m.history.iter().chain([&m.current]))
                    .filter_map(|id| dev.replica.version(id))
                    .filter(|v| scope_covers(scope_fields(&scope), scope_fields(&v.scope)))
                    .collect();
                let newest = held.iter().map(|v| v.created).max().unwrap_or(i64::MIN);
                let at = erasure_bound(wall, newest);
                let ids = held.iter().map(|v| v.id).collect();
                self.held_at_erasing.push(((scope.clone(), at), ids));
                Change::Erase { scope, at }
            }
        };
        if let Change::Erase { scope, at } = &change {
            dev.seen.insert((scope.clone(), *at));
        }
        dev.replica.apply(&change);
        dev.made.push(change);
    }

    fn push(&mut self, d: usize) {
        let dev = &mut self.devices[d];
        self.bucket[d].extend(dev.made[dev.pushed..].iter().cloned());
        dev.pushed = dev.made.len();
    }

    fn pull(&mut self, d: usize, reach: u8, recorded: bool) {
        let wall = self.now + self.devices[d].skew;
        for origin in 0..self.bucket.len() {
            if origin == d || reach & (1 << origin) == 0 {
                continue;
            }
            let dev = &mut self.devices[d];
            let from = dev.pulled.get(&origin).copied().unwrap_or(0);
            for change in &self.bucket[origin][from..] {
                if let Some(at) = stamp(change) {
                    dev.clock.observe(at, wall);
                }
                if let Change::Erase { scope, at } = change {
                    dev.seen.insert((scope.clone(), *at));
                }
                dev.replica.apply(change);
            }
            if recorded {
                dev.pulled.insert(origin, self.bucket[origin].len());
            }
        }
    }
}

fn stamp(change: &C) -> Option<Hlc> {
    match change {
        Change::Version(v) => Some(v.made),
        Change::Meta { at, .. } | Change::Forget { at, .. } => Some(*at),
        Change::Counts { .. } | Change::Erase { .. } => None,
    }
}

proptest! {
    #[test]
    fn replicas_converge_and_lose_no_write((skews, steps) in scenario()) {
        let mut w = World::new(&skews);
        for s in &steps {
            match s {
                Step::Local { device, op } => w.local(*device, op),
                Step::Push { device } => w.push(*device),
                Step::Pull { device, reach } => w.pull(*device, *reach, true),
                Step::KilledPull { device, reach } => w.pull(*device, *reach, false),
                Step::Advance { ms } => w.now += ms,
            }
        }
        let n = w.devices.len();
        for d in 0..n {
            w.push(d);
        }
        for d in 0..n {
            w.pull(d, u8::MAX, true);
        }
        let first = &w.devices[0].replica;
        for dev in &w.devices[1..] {
            prop_assert_eq!(&dev.replica, first);
        }
        let view = first.view();
        for dev in &w.devices[1..] {
            prop_assert_eq!(&dev.replica.view(), &view);
        }
        // No version lost: each is held, and live unless a tombstone names it.
        let (forgotten, erased) = first.tombstones();
        for v in &w.versions {
            prop_assert_eq!(first.version(&v.id), Some(v));
            let gone = forgotten.contains(&v.id)
                || erased.iter().any(|(s, at)| {
                    erases(scope_fields(s), *at, scope_fields(&v.scope), v.created)
                });
            let shown = view.get(&v.lineage).is_some_and(|m| m.current == v.id || m.history.contains(&v.id));
            prop_assert_eq!(shown, !gone, "{:?}", v.id);
        }
        // An erasure takes what its eraser held of its scope, and nothing made by a device
        // that had seen it, whatever the clocks said.
        for (erasure, held) in &w.held_at_erasing {
            for id in held {
                let v = first.version(id).unwrap();
                prop_assert!(!view.get(&v.lineage).is_some_and(|m| m.current == *id || m.history.contains(id)),
                    "{:?} held by the eraser of {:?} survived", id, erasure);
            }
        }
        for v in &w.versions {
            for (scope, at) in &w.seen_at_making[&v.id] {
                prop_assert!(!erases(scope_fields(scope), *at, scope_fields(&v.scope), v.created),
                    "{:?} made after its maker saw {:?} erased at {}", v.id, scope, at);
            }
        }
        // The current version is the live one made last; the counters add up over devices.
        for (lineage, m) in &view {
            let current = first.version(&m.current).unwrap();
            prop_assert_eq!(current.lineage, *lineage);
            for h in &m.history {
                prop_assert!(first.version(h).unwrap().made < current.made);
            }
            let mut sum = Counts::default();
            for dev in &w.devices {
                if let Some(c) = dev.counts.get(&m.current) {
                    sum = sum.add(*c);
                }
            }
            prop_assert_eq!(m.counts, sum);
        }
    }
}

#[test]
fn a_clock_an_hour_behind_still_orders_after_what_it_saw() {
    let mut ahead = HlcClock::new(1, Hlc::default());
    let mut behind = HlcClock::new(2, Hlc::default());
    let now = 1_767_225_600_000;
    let a = ahead.tick(now + HOUR);
    behind.observe(a, now);
    let b = behind.tick(now);
    assert!(b > a, "{b:?} after {a:?}");
    assert_eq!(b.wall, a.wall, "the wall clock stays the later one seen");
    // Readings of one clock only grow, whatever its wall clock does.
    let mut c = HlcClock::new(3, Hlc::default());
    let mut last = Hlc::default();
    for wall in [5, 9, 3, 9, 9, 1, 12] {
        let r = c.tick(wall);
        assert!(r > last);
        assert_eq!(c.last(), r);
        last = r;
    }
}

#[test]
fn a_forget_beats_a_copy_that_arrives_later_and_an_erase_spares_a_later_life() {
    let at = |wall| Hlc {
        wall,
        counter: 0,
        device: 1,
    };
    let id = |local| GlobalId { origin: 1, local };
    let version = |local, made, user: &str| {
        Change::Version(Version {
            id: id(local),
            lineage: id(local),
            made: at(made),
            scope: [Some(user.to_string()), None, None],
            created: made,
            body: "x".to_string(),
        })
    };
    let mut r: Replica<String, ()> = Replica::default();
    assert!(r.apply(&Change::Forget {
        id: id(1),
        at: at(5)
    }));
    assert!(r.apply(&version(1, 2, "ana")));
    assert!(!r.apply(&version(1, 2, "ana")), "a copy is not news");
    assert!(
        r.view().is_empty(),
        "the tombstone came first and still wins"
    );
    r.apply(&version(2, 3, "bob"));
    r.apply(&version(3, 9, "bob"));
    r.apply(&Change::Erase {
        scope: [Some("bob".into()), None, None],
        at: 6,
    });
    let view = r.view();
    assert_eq!(view.keys().copied().collect::<Vec<_>>(), [id(3)]);
}

#[test]
fn an_erasure_of_a_user_destroys_their_keys_made_before_it_and_no_other() {
    let bo = |at| ([Some("bo".to_string()), None, None], at);
    let bos_agent = ([Some("bo".to_string()), Some("a".to_string()), None], 100);
    // Made before the bound (or at it), learned later or not: destroyed.
    assert!(key_erased(&[bo(100)], "bo", 99));
    assert!(key_erased(&[bo(100)], "bo", 100));
    assert!(key_erased(&[bo(50), bo(100)], "bo", 99));
    // Made after it (the user's new life), another user's, or an erasure of one of bo's
    // agents only (which destroys no key): kept.
    assert!(!key_erased(&[bo(100)], "bo", 101));
    assert!(!key_erased(&[bo(100)], "cy", 1));
    assert!(!key_erased(&[bos_agent], "bo", 1));
    assert!(!key_erased(&[], "bo", 1));
}
