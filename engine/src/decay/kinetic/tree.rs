//! The kinetic segment tree over the buckets: [`KineticQueue`].

use super::slots::SlotIndex;

use super::node::{Entry, Node, BUCKET, EMPTY_ENTRY, EMPTY_NODE};
use super::{before, check, AdvanceStats, KineticError, Line, Time, EMPTY};

/// The base time moves up to now once now is this far past it, so stored values stay small
/// and accurate whatever the absolute time.
const REBASE_AFTER: Time = 1_048_576.0;

/// The minimum of a set of lines under monotone time.
#[derive(Debug, Clone)]
pub struct KineticQueue {
    pub(super) now: Time,
    /// Lines are stored as values at this time.
    pub(super) base: Time,
    /// Number of slots in use or free (slots ≥ this are unused).
    pub(super) used: usize,
    pub(super) free: Vec<u32>,
    pub(super) by_id: SlotIndex,
    /// `BUCKET · cap` slots; slot `s` lies in bucket `s / BUCKET`.
    pub(super) entries: Vec<Entry>,
    /// Number of buckets, a power of two; node `cap + b` is bucket `b`'s summary, node 1 the
    /// root.
    pub(super) cap: usize,
    pub(super) nodes: Vec<Node>,
}

impl KineticQueue {
    /// An empty queue at time `now`.
    pub fn new(now: Time) -> Self {
        KineticQueue {
            now,
            base: now,
            used: 0,
            free: Vec::new(),
            by_id: SlotIndex::default(),
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
        self.by_id.len() == 0
    }

    /// The line of `id` (anchored at the queue's base time: the same line, another anchor).
    pub fn line(&self, id: u64) -> Option<Line> {
        self.by_id
            .get(id)
            .map(|s| self.line_of(&self.entries[s as usize]))
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
        if self.by_id.get(id).is_some() {
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
        let slot = self.by_id.remove(id)?;
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
        match self.by_id.get(id) {
            Some(slot) => {
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
    pub(super) fn crossing(&self, w_slope: f64, vw: f64, loser_slope: f64, vloser: f64) -> Time {
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
