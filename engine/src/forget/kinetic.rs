//! A kinetic tournament over lines: the minimum of `v_i(t) = v0_i + slope_i·(t − t0_i)` as time
//! only moves forward.
//!
//! Structure: a kinetic segment tree (a kinetic tournament, Basch, Guibas & Hershberger,
//! "Data structures for mobile data", SODA 1997, laid out as an array segment tree over a slot
//! arena, as recommended by memloop's research note on kinetic queues). Every internal node keeps
//! the winner (minimum) of its subtree at the current time and `melt`, the earliest future time
//! at which the winner of any node in its subtree changes. The tree is its own event queue:
//! `advance(t)` visits exactly the nodes whose `melt ≤ t`, children first, and recomputes each
//! once.
//!
//! The leaves are buckets of 16 slots rather than single items. A bucket is a flat kinetic node:
//! its summary is the minimum of its lines now and, as certificate, the first time any other of
//! its lines crosses below that minimum (the minimum of a set of lines changes first exactly
//! there). Scanning 16 contiguous lines is cheaper than the four tree levels it replaces, a
//! bucket fails no more often than the sub-tournament it replaces (whose internal nodes also
//! fail on changes that do not reach its top), and the tree becomes 16 times smaller: at a
//! million items it is 4 MB and stays in cache, where a one-item-per-leaf tree of 64 MB missed
//! on every lower level (measured: 0.85–1.0 M → 1.3–1.8 M mixed operations/s at n = 10⁶).
//!
//! Bounds (n items, b = 16 per bucket, capacity the next power of two): insert / remove /
//! set_line / pop O(b + log n); peek O(1); `at_most(θ)` O(k (b + log n)) for k results;
//! `advance` O(1 + E (b + log n)) for E certificate failures; for lines, a kinetic tournament
//! processes O(n log n) events over all time (each pair of lines crosses at most once).
//! Memory: O(n).
//!
//! Robustness:
//! - the order is the total key (value at now, slope, id): at a crossing the faster-decaying
//!   item already counts as smaller ("the order at now + ε"), so ties cannot loop, and equal
//!   or zero slopes (never crossing) work;
//! - lines are anchored (value at an anchor time), so values stay accurate at large times;
//! - winners are always re-evaluated at the current time, never trusted from the past; a
//!   crossing computed at or before now (rounding) is retried just after now, so one `advance`
//!   never loops;
//! - time must not go backwards (an error), but any jump forward is one `advance`.

use rustc_hash::FxHashMap;

/// Time in the queue's unit (the engine uses seconds since its epoch).
pub type Time = f64;

/// A line anchored at `t0`: value `v0 + slope·(t − t0)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Value at `t0`.
    pub v0: f64,
    /// Change per unit of time (negative for decay).
    pub slope: f64,
    /// Anchor time.
    pub t0: Time,
}

impl Line {
    /// The value at `t`.
    #[inline]
    pub fn eval(&self, t: Time) -> f64 {
        self.v0 + self.slope * (t - self.t0)
    }
}

/// Work done by one [`KineticQueue::advance`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdvanceStats {
    /// Buckets and internal nodes recomputed (certificate failures and their ancestors).
    pub recomputed: u64,
}

/// Errors of the queue.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KineticError {
    /// `advance` to a time before the current one.
    #[error("time {to} is before the queue's current time {now}")]
    TimeWentBack {
        /// Current time.
        now: Time,
        /// Requested time.
        to: Time,
    },
    /// The id is already in the queue.
    #[error("id {0} is already in the queue")]
    Duplicate(u64),
    /// A line with a non-finite value or slope.
    #[error("line of id {0} is not finite")]
    NotFinite(u64),
}

/// The id that marks an empty slot or node (not accepted as an item id).
const EMPTY: u64 = u64::MAX;

/// Items per leaf bucket. A bucket is a flat kinetic node: its winner is the minimum of its
/// lines and its certificate the first time another of its lines crosses below that winner.
/// Scanning 16 contiguous lines (384 bytes) costs less than the four tree levels it replaces,
/// and it shrinks the tree 16-fold: at a million items the tree (4 MB) stays in cache.
const BUCKET: usize = 16;

/// One item: its id and its line, stored as the value at the queue's base time.
#[derive(Debug, Clone, Copy)]
struct Entry {
    id: u64,
    v: f64,
    slope: f64,
}

const EMPTY_ENTRY: Entry = Entry {
    id: EMPTY,
    v: 0.0,
    slope: 0.0,
};

/// A tree node: the winner of its subtree (its id and line, copied in so a recompute reads
/// only the two adjacent child nodes, one cache line) and the subtree's next winner change.
/// The line is stored as its value at the queue's base time.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Node {
    id: u64,
    v: f64,
    slope: f64,
    melt: Time,
}

impl Node {
    /// Bit-for-bit equal (a recompute that changed nothing).
    #[inline]
    fn same(&self, other: &Node) -> bool {
        self.id == other.id
            && self.v.to_bits() == other.v.to_bits()
            && self.slope.to_bits() == other.slope.to_bits()
            && self.melt.to_bits() == other.melt.to_bits()
    }
}

const EMPTY_NODE: Node = Node {
    id: EMPTY,
    v: 0.0,
    slope: 0.0,
    melt: Time::INFINITY,
};

/// The base time moves up to now once now is this far past it, so stored values stay small
/// and accurate whatever the absolute time.
const REBASE_AFTER: Time = 1_048_576.0;

/// The minimum of a set of lines under monotone time.
#[derive(Debug, Clone)]
pub struct KineticQueue {
    now: Time,
    /// Lines are stored as values at this time.
    base: Time,
    /// Number of slots in use or free (slots ≥ this are unused).
    used: usize,
    free: Vec<u32>,
    by_id: FxHashMap<u64, u32>,
    /// `BUCKET · cap` slots; slot `s` lies in bucket `s / BUCKET`.
    entries: Vec<Entry>,
    /// Number of buckets, a power of two; node `cap + b` is bucket `b`'s summary, node 1 the
    /// root.
    cap: usize,
    nodes: Vec<Node>,
}

impl KineticQueue {
    /// An empty queue at time `now`.
    pub fn new(now: Time) -> Self {
        KineticQueue {
            now,
            base: now,
            used: 0,
            free: Vec::new(),
            by_id: FxHashMap::default(),
            entries: vec![EMPTY_ENTRY; BUCKET],
            cap: 1,
            nodes: vec![EMPTY_NODE; 2],
        }
    }

    /// The current time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The line of `id` (anchored at the queue's base time: the same line, another anchor).
    pub fn line(&self, id: u64) -> Option<Line> {
        self.by_id
            .get(&id)
            .map(|&s| self.line_of(&self.entries[s as usize]))
    }

    fn line_of(&self, e: &Entry) -> Line {
        Line {
            v0: e.v,
            slope: e.slope,
            t0: self.base,
        }
    }

    fn entry(&self, id: u64, line: &Line) -> Entry {
        Entry {
            id,
            v: line.eval(self.base),
            slope: line.slope,
        }
    }

    #[inline]
    fn eval(&self, v: f64, slope: f64, t: Time) -> f64 {
        v + slope * (t - self.base)
    }

    /// Adds `id` with `line`.
    ///
    /// # Errors
    /// [`KineticError::Duplicate`] or [`KineticError::NotFinite`] (also for the reserved id
    /// `u64::MAX`).
    pub fn insert(&mut self, id: u64, line: Line) -> Result<(), KineticError> {
        check(id, &line)?;
        if self.by_id.contains_key(&id) {
            return Err(KineticError::Duplicate(id));
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.used += 1;
                if self.used > self.cap * BUCKET {
                    self.resize(self.cap * 2);
                }
                (self.used - 1) as u32
            }
        };
        self.by_id.insert(id, slot);
        let entry = self.entry(id, &line);
        self.set_slot(slot, entry);
        Ok(())
    }

    /// Removes `id`; returns its line.
    pub fn remove(&mut self, id: u64) -> Option<Line> {
        let slot = self.by_id.remove(&id)?;
        let line = self.line_of(&self.entries[slot as usize]);
        self.free.push(slot);
        self.set_slot(slot, EMPTY_ENTRY);
        if self.by_id.len() * 4 < self.used && self.used > 64 {
            self.compact();
        }
        Some(line)
    }

    /// Replaces the line of `id` (a reinforcement); returns the old one, or `None` (and
    /// inserts) if `id` was absent.
    ///
    /// # Errors
    /// [`KineticError::NotFinite`].
    pub fn set_line(&mut self, id: u64, line: Line) -> Result<Option<Line>, KineticError> {
        check(id, &line)?;
        match self.by_id.get(&id) {
            Some(&slot) => {
                let old = self.line_of(&self.entries[slot as usize]);
                let entry = self.entry(id, &line);
                self.set_slot(slot, entry);
                Ok(Some(old))
            }
            None => self.insert(id, line).map(|()| None),
        }
    }

    /// Moves time forward to `t`, processing every winner change up to `t`.
    ///
    /// # Errors
    /// [`KineticError::TimeWentBack`] if `t` is before the current time (nothing changes).
    pub fn advance(&mut self, t: Time) -> Result<AdvanceStats, KineticError> {
        if t < self.now || t.is_nan() {
            return Err(KineticError::TimeWentBack {
                now: self.now,
                to: t,
            });
        }
        self.now = t;
        if t - self.base > REBASE_AFTER {
            self.rebase(t);
        }
        let mut stats = AdvanceStats::default();
        if self.nodes[1].melt <= t {
            self.visit(1, &mut stats);
        }
        Ok(stats)
    }

    /// The minimum item and its value now.
    pub fn peek_min(&self) -> Option<(u64, f64)> {
        let root = &self.nodes[1];
        (root.id != EMPTY).then(|| (root.id, self.eval(root.v, root.slope, self.now)))
    }

    /// Removes and returns the minimum item and its value now.
    pub fn pop_min(&mut self) -> Option<(u64, f64)> {
        let (id, v) = self.peek_min()?;
        self.remove(id);
        Some((id, v))
    }

    /// Every item whose value now is at most `theta`, with its value (in no particular
    /// order). Output-sensitive: subtrees and buckets whose minimum is above `theta` are
    /// skipped.
    pub fn at_most(&self, theta: f64) -> Vec<(u64, f64)> {
        let mut out = Vec::new();
        let mut stack = vec![1usize];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n];
            if node.id == EMPTY || self.eval(node.v, node.slope, self.now) > theta {
                continue;
            }
            if n >= self.cap {
                for e in self.bucket(n - self.cap) {
                    let v = self.eval(e.v, e.slope, self.now);
                    if e.id != EMPTY && v <= theta {
                        out.push((e.id, v));
                    }
                }
            } else {
                stack.push(2 * n);
                stack.push(2 * n + 1);
            }
        }
        out
    }

    /// All items.
    pub fn iter(&self) -> impl Iterator<Item = (u64, Line)> + '_ {
        self.entries[..self.used]
            .iter()
            .filter(|e| e.id != EMPTY)
            .map(|e| (e.id, self.line_of(e)))
    }

    fn bucket(&self, b: usize) -> &[Entry] {
        &self.entries[b * BUCKET..(b + 1) * BUCKET]
    }

    fn visit(&mut self, n: usize, stats: &mut AdvanceStats) {
        if n < self.cap {
            for c in [2 * n, 2 * n + 1] {
                if self.nodes[c].melt <= self.now {
                    self.visit(c, stats);
                }
            }
        }
        self.refresh(n);
        stats.recomputed += 1;
    }

    /// Recomputes node `n` from what lies under it: a bucket's lines (`n ≥ cap`) or its two
    /// children.
    #[inline]
    fn refresh(&mut self, n: usize) {
        if n >= self.cap {
            self.recompute_bucket(n - self.cap);
        } else {
            self.recompute(n);
        }
    }

    /// True if `a` is before `b` now: (value, slope, id) (tests).
    #[cfg(test)]
    fn less(&self, a: &Node, b: &Node) -> bool {
        let dt = self.now - self.base;
        before(
            a.v + a.slope * dt,
            a.slope,
            a.id,
            b.v + b.slope * dt,
            b.slope,
            b.id,
        )
    }

    /// Recomputes bucket `b`'s summary: its minimum now, and the first time another of its
    /// lines drops below that minimum.
    #[inline]
    fn recompute_bucket(&mut self, b: usize) {
        let dt = self.now - self.base;
        let bucket = self.bucket(b);
        // Each value is evaluated once and shared by the minimum and the crossings.
        let values: [f64; BUCKET] = std::array::from_fn(|i| bucket[i].v + bucket[i].slope * dt);
        let mut winner: Option<usize> = None;
        for (i, e) in bucket.iter().enumerate() {
            if e.id == EMPTY {
                continue;
            }
            let wins = winner.is_none_or(|w| {
                let w_entry = &bucket[w];
                before(
                    values[i],
                    e.slope,
                    e.id,
                    values[w],
                    w_entry.slope,
                    w_entry.id,
                )
            });
            if wins {
                winner = Some(i);
            }
        }
        let node = match winner {
            None => EMPTY_NODE,
            Some(w) => {
                let win = bucket[w];
                let mut melt = Time::INFINITY;
                for (i, e) in bucket.iter().enumerate() {
                    if i != w && e.id != EMPTY {
                        melt = melt.min(self.crossing(win.slope, values[w], e.slope, values[i]));
                    }
                }
                Node {
                    id: win.id,
                    v: win.v,
                    slope: win.slope,
                    melt,
                }
            }
        };
        self.nodes[self.cap + b] = node;
    }

    #[inline]
    fn recompute(&mut self, n: usize) {
        let (l, r) = (self.nodes[2 * n], self.nodes[2 * n + 1]);
        let child_melt = l.melt.min(r.melt);
        let (w, melt) = match (l.id == EMPTY, r.id == EMPTY) {
            (true, true) => (EMPTY_NODE, Time::INFINITY),
            (false, true) => (l, child_melt),
            (true, false) => (r, child_melt),
            (false, false) => {
                // Each value is evaluated once and shared by the comparison and the crossing.
                let dt = self.now - self.base;
                let (vl, vr) = (l.v + l.slope * dt, r.v + r.slope * dt);
                let ((w, vw), (loser, vloser)) = if before(vl, l.slope, l.id, vr, r.slope, r.id) {
                    ((l, vl), (r, vr))
                } else {
                    ((r, vr), (l, vl))
                };
                let cross = self.crossing(w.slope, vw, loser.slope, vloser);
                (w, child_melt.min(cross))
            }
        };
        self.nodes[n] = Node { melt, ..w };
    }

    /// When the loser's line drops below the winner's (∞ if never), given both slopes and
    /// values now.
    #[inline]
    fn crossing(&self, w_slope: f64, vw: f64, loser_slope: f64, vloser: f64) -> Time {
        if loser_slope >= w_slope {
            return Time::INFINITY;
        }
        let gap = vloser - vw; // ≥ 0 up to rounding
        let t = self.now + gap / (w_slope - loser_slope);
        // A few ulps early: waking before the true crossing only recomputes the same winner,
        // waking after it would leave a stale winner at the crossing time itself.
        let early = t - (t.abs() * 8.0 * f64::EPSILON + f64::MIN_POSITIVE);
        if early > self.now {
            early
        } else {
            // The crossing is at now or within rounding of it: look again just after now.
            self.now.next_up()
        }
    }

    /// Puts `entry` in `slot`, recomputes its bucket and then its ancestors, stopping at the
    /// first one the change leaves exactly as it was: everything above it depends on the tree
    /// only through that node, and every ancestor's certificate still holds (its melt is after
    /// now).
    fn set_slot(&mut self, slot: u32, entry: Entry) {
        self.entries[slot as usize] = entry;
        let mut n = self.cap + slot as usize / BUCKET;
        loop {
            let before = self.nodes[n];
            self.refresh(n);
            if n == 1 || before.same(&self.nodes[n]) {
                break;
            }
            n /= 2;
        }
    }

    /// Rebuilds the tree for `cap` buckets (a power of two holding every used slot) in
    /// O(cap · BUCKET).
    fn resize(&mut self, cap: usize) {
        let cap = cap.max(1).next_power_of_two();
        self.entries.resize(cap * BUCKET, EMPTY_ENTRY);
        self.nodes = vec![EMPTY_NODE; 2 * cap];
        self.cap = cap;
        self.rebuild();
    }

    /// Recomputes every bucket and node.
    fn rebuild(&mut self) {
        for n in (1..2 * self.cap).rev() {
            self.refresh(n);
        }
    }

    /// Moves the base time to `t`, re-expressing every stored value (O(n)).
    fn rebase(&mut self, t: Time) {
        let dt = t - self.base;
        for e in &mut self.entries {
            if e.id != EMPTY {
                e.v += e.slope * dt;
            }
        }
        for n in &mut self.nodes {
            if n.id != EMPTY {
                n.v += n.slope * dt;
            }
        }
        self.base = t;
    }

    /// Packs the items into the first slots and shrinks the tree.
    fn compact(&mut self) {
        let items: Vec<Entry> = self.entries[..self.used]
            .iter()
            .filter(|e| e.id != EMPTY)
            .copied()
            .collect();
        self.free.clear();
        self.by_id.clear();
        self.used = items.len();
        let cap = items.len().div_ceil(BUCKET).max(1).next_power_of_two();
        self.entries = vec![EMPTY_ENTRY; cap * BUCKET];
        for (s, e) in items.into_iter().enumerate() {
            self.by_id.insert(e.id, s as u32);
            self.entries[s] = e;
        }
        self.nodes = vec![EMPTY_NODE; 2 * cap];
        self.cap = cap;
        self.rebuild();
    }

    /// Checks every bucket and node against its definition (tests).
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        for b in 0..self.cap {
            let min = self
                .bucket(b)
                .iter()
                .filter(|e| e.id != EMPTY)
                .map(|e| Node {
                    id: e.id,
                    v: e.v,
                    slope: e.slope,
                    melt: 0.0,
                })
                .reduce(|a, c| if self.less(&c, &a) { c } else { a });
            let node = &self.nodes[self.cap + b];
            assert_eq!(
                node.id,
                min.map_or(EMPTY, |m| m.id),
                "bucket {b} at {}",
                self.now
            );
            assert!(node.melt > self.now, "bucket {b} melt ≤ now {}", self.now);
        }
        for n in 1..self.cap {
            let (l, r) = (self.nodes[2 * n], self.nodes[2 * n + 1]);
            let expect = match (l.id == EMPTY, r.id == EMPTY) {
                (true, true) => EMPTY,
                (false, true) => l.id,
                (true, false) => r.id,
                (false, false) => {
                    if self.less(&l, &r) {
                        l.id
                    } else {
                        r.id
                    }
                }
            };
            assert_eq!(self.nodes[n].id, expect, "node {n} winner at {}", self.now);
            assert!(
                self.nodes[n].melt > self.now,
                "node {n} melt ≤ now {}",
                self.now
            );
        }
        assert_eq!(self.by_id.len(), self.iter().count());
    }
}

/// The queue's order: (value now, slope, id), given the two values now.
#[inline]
fn before(va: f64, sa: f64, ia: u64, vb: f64, sb: f64, ib: u64) -> bool {
    va.total_cmp(&vb)
        .then(sa.total_cmp(&sb))
        .then(ia.cmp(&ib))
        .is_lt()
}

fn check(id: u64, l: &Line) -> Result<(), KineticError> {
    if id != EMPTY && l.v0.is_finite() && l.slope.is_finite() && l.t0.is_finite() {
        Ok(())
    } else {
        Err(KineticError::NotFinite(id))
    }
}

/// The brute-force reference: every query scans all items. The oracle of the property tests
/// and the baseline of `kinetic-bench`.
#[derive(Debug, Clone, Default)]
pub struct BruteForceQueue {
    now: Time,
    items: FxHashMap<u64, Line>,
}

impl BruteForceQueue {
    /// An empty queue at `now`.
    pub fn new(now: Time) -> Self {
        BruteForceQueue {
            now,
            items: FxHashMap::default(),
        }
    }
    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// Adds or replaces.
    pub fn set_line(&mut self, id: u64, line: Line) {
        self.items.insert(id, line);
    }
    /// Removes.
    pub fn remove(&mut self, id: u64) -> Option<Line> {
        self.items.remove(&id)
    }
    /// Moves time forward.
    ///
    /// # Errors
    /// As [`KineticQueue::advance`].
    pub fn advance(&mut self, t: Time) -> Result<(), KineticError> {
        if t < self.now || t.is_nan() {
            return Err(KineticError::TimeWentBack {
                now: self.now,
                to: t,
            });
        }
        self.now = t;
        Ok(())
    }
    /// The minimum by (value, slope, id).
    pub fn peek_min(&self) -> Option<(u64, f64)> {
        self.items
            .iter()
            .map(|(&id, l)| (l.eval(self.now), l.slope, id))
            .min_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(a.1.total_cmp(&b.1))
                    .then(a.2.cmp(&b.2))
            })
            .map(|(v, _, id)| (id, v))
    }
    /// Removes the minimum.
    pub fn pop_min(&mut self) -> Option<(u64, f64)> {
        let m = self.peek_min()?;
        self.items.remove(&m.0);
        Some(m)
    }
    /// Items at most `theta` now.
    pub fn at_most(&self, theta: f64) -> Vec<(u64, f64)> {
        self.items
            .iter()
            .map(|(&id, l)| (id, l.eval(self.now)))
            .filter(|&(_, v)| v <= theta)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64, i32, i32),
        Remove(u64),
        SetLine(u64, i32, i32),
        Advance(u32),
        Pop,
        AtMost(i32),
    }

    /// Dyadic values (multiples of 1/64, small numerators): every evaluation and comparison is
    /// exact in f64, so the queue must agree with the oracle exactly.
    fn dy(x: i32) -> f64 {
        f64::from(x) / 64.0
    }

    fn op(ids: u64, slopes: i32) -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..ids, -512i32..512, -slopes..=0).prop_map(|(i, v, s)| Op::Insert(i, v, s)),
            1 => (0..ids).prop_map(Op::Remove),
            2 => (0..ids, -512i32..512, -slopes..=0).prop_map(|(i, v, s)| Op::SetLine(i, v, s)),
            3 => (0u32..96).prop_map(Op::Advance),
            1 => Just(Op::Pop),
            1 => (-1024i32..512).prop_map(Op::AtMost),
        ]
    }

    fn sorted(mut v: Vec<(u64, f64)>) -> Vec<(u64, f64)> {
        v.sort_by_key(|a| a.0);
        v
    }

    fn run(ops: &[Op]) {
        let mut q = KineticQueue::new(0.0);
        let mut o = BruteForceQueue::new(0.0);
        let mut now = 0.0;
        for op in ops {
            match *op {
                Op::Insert(id, v, s) => {
                    let line = Line {
                        v0: dy(v),
                        slope: dy(s),
                        t0: now,
                    };
                    let r = q.insert(id, line);
                    if o.items.contains_key(&id) {
                        assert_eq!(r, Err(KineticError::Duplicate(id)));
                    } else {
                        r.unwrap();
                        o.set_line(id, line);
                    }
                }
                Op::Remove(id) => assert_eq!(
                    q.remove(id).map(|l| l.eval(now)),
                    o.remove(id).map(|l| l.eval(now))
                ),
                Op::SetLine(id, v, s) => {
                    let line = Line {
                        v0: dy(v),
                        slope: dy(s),
                        t0: now,
                    };
                    let had = o.items.insert(id, line).map(|l| l.eval(now));
                    assert_eq!(q.set_line(id, line).unwrap().map(|l| l.eval(now)), had);
                }
                Op::Advance(dt) => {
                    now += dy(dt as i32);
                    q.advance(now).unwrap();
                    o.advance(now).unwrap();
                }
                Op::Pop => assert_eq!(q.pop_min(), o.pop_min()),
                Op::AtMost(th) => assert_eq!(sorted(q.at_most(dy(th))), sorted(o.at_most(dy(th)))),
            }
            assert_eq!(q.peek_min(), o.peek_min(), "after {op:?} at {now}");
            assert_eq!(q.len(), o.len());
            q.check_invariants();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// 96 sequences × up to 160 operations ≈ 15k operations against the oracle.
        #[test]
        fn agrees_with_brute_force(ops in proptest::collection::vec(op(40, 64), 1..160)) {
            run(&ops);
        }

        /// All slopes equal (no crossings at all) and many identical lines.
        #[test]
        fn equal_slopes_and_identical_lines(ops in proptest::collection::vec(op(12, 0), 1..160)) {
            run(&ops);
        }

        /// Few distinct slopes, many items: many ties and simultaneous crossings.
        #[test]
        fn few_slopes_many_events(ops in proptest::collection::vec(op(200, 2), 1..200)) {
            run(&ops);
        }
    }

    #[test]
    fn twenty_thousand_random_operations_with_growth_and_shrink() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let ops: Vec<Op> = (0..20_000)
            .map(|i| {
                // Grow for the first half, shrink in the second: crosses powers of two both ways.
                let insert_bias = if i < 10_000 { 6 } else { 1 };
                match rng.gen_range(0..10 + insert_bias) {
                    0..=1 => Op::Remove(rng.gen_range(0..2000)),
                    2..=3 => Op::SetLine(
                        rng.gen_range(0..2000),
                        rng.gen_range(-512..512),
                        rng.gen_range(-64..=0),
                    ),
                    4..=5 => Op::Advance(rng.gen_range(0..32)),
                    6..=7 => Op::Pop,
                    8 => Op::AtMost(rng.gen_range(-2048..0)),
                    _ => Op::Insert(
                        rng.gen_range(0..2000),
                        rng.gen_range(-512..512),
                        rng.gen_range(-64..=0),
                    ),
                }
            })
            .collect();
        run(&ops);
    }

    #[test]
    fn float_lines_at_epoch_scale_times_and_huge_jumps() {
        // Ebbinghaus keys in log space with times in seconds since 1970: no exactness, so
        // compare the minimum's value within a relative epsilon, and never loop.
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let t0 = 1.7e9;
        let mut q = KineticQueue::new(t0);
        let mut o = BruteForceQueue::new(t0);
        let mut now = t0;
        for i in 0..5_000u64 {
            let s: f64 = rng.gen_range(60.0..1e7);
            let w: f64 = rng.gen_range(0.01..1.0);
            let line = Line {
                v0: w.ln(),
                slope: -1.0 / s,
                t0: now,
            };
            q.set_line(i % 700, line).unwrap();
            o.set_line(i % 700, line);
            now += if i % 1000 == 999 {
                1e8
            } else {
                rng.gen_range(0.0..100.0)
            };
            q.advance(now).unwrap();
            o.advance(now).unwrap();
            let (a, b) = (q.peek_min().unwrap().1, o.peek_min().unwrap().1);
            assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} vs {b}");
        }
        assert!(matches!(
            q.advance(now - 1.0),
            Err(KineticError::TimeWentBack { .. })
        ));
        assert!(matches!(
            q.insert(
                1,
                Line {
                    v0: f64::NAN,
                    slope: 0.0,
                    t0: 0.0
                }
            ),
            Err(KineticError::NotFinite(1))
        ));
    }
}
