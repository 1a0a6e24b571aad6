//! Decay models and the forgetting policy: how a memory's retention falls, when it crosses
//! the tier thresholds (closed form), and how reinforcement restarts it.

use super::kinetic::Line;
use crate::clock::Timestamp;
use crate::item::{Kind, MemoryItem, Tier};

/// The fields of a memory that decay depends on (kept in the catalog for every memory).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DecayFields {
    pub(crate) kind: Kind,
    pub(crate) importance: f32,
    /// Seconds; 0 = unset (the policy's default).
    pub(crate) strength: f64,
    pub(crate) anchor: Timestamp,
    pub(crate) pinned: bool,
    pub(crate) tier: Tier,
    /// When what it says stopped holding: a current working memory is demoted then at the
    /// latest (a superseded version's window is closed by its successor; it is not churned).
    pub(crate) valid_until: Option<Timestamp>,
}

impl DecayFields {
    pub(crate) fn of(item: &MemoryItem) -> Self {
        DecayFields {
            kind: item.kind,
            importance: item.importance,
            strength: item.strength,
            anchor: item.decay_anchor,
            pinned: item.pinned,
            tier: item.tier,
            valid_until: item.valid_until.filter(|_| !item.is_superseded()),
        }
    }
}

/// How retention falls with time τ since the decay anchor (w = importance, S = strength).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecayModel {
    /// SAGE's Ebbinghaus curve R = w·exp(−τ/S), ordered in log space (ln w − τ/S).
    #[default]
    Ebbinghaus,
    /// Linear decay w − τ/S.
    Linear,
}

/// When memories change tier, how recall reinforces them, and how many may be kept.
#[derive(Debug, Clone, PartialEq)]
pub struct ForgetPolicy {
    /// Decay model (one per store: values of different models are never compared).
    pub model: DecayModel,
    /// θ1: below it a memory leaves working memory for long-term (default 0.3).
    pub working_threshold: f64,
    /// θ2: below it a memory is forgotten, deleted durably (default 0.02).
    pub forget_threshold: f64,
    /// Base strength S in days per kind, in [`Kind::ALL`] order; scaled by `0.5 + importance`.
    pub strength_days: [f64; 9],
    /// Factor S grows by at each reinforcement (spaced repetition; default 2).
    pub growth: f64,
    /// Most memories kept in the whole store; the least retained are evicted first.
    pub capacity: Option<usize>,
    /// Most memories kept per namespace.
    pub capacity_per_namespace: Option<usize>,
    /// Most memories kept per user (each user's least retained evicted first; memories of no
    /// user are not counted). A sweep of one user's scope ([`crate::Scoped::sweep`])
    /// applies it to that user alone.
    pub capacity_per_user: Option<usize>,
    /// False turns forgetting off (no tiers, no deletion, no eviction).
    pub enabled: bool,
    /// Forgetting events kept in the log (oldest dropped first; default 100,000).
    pub log_limit: usize,
}

impl Default for ForgetPolicy {
    fn default() -> Self {
        ForgetPolicy {
            model: DecayModel::Ebbinghaus,
            working_threshold: 0.3,
            forget_threshold: 0.02,
            // chunk, triple, fact, summary, task, reflection, subject, document, turn
            strength_days: [30.0, 90.0, 90.0, 60.0, 30.0, 180.0, 60.0, 30.0, 30.0],
            growth: 2.0,
            capacity: None,
            capacity_per_namespace: None,
            capacity_per_user: None,
            enabled: true,
            log_limit: 100_000,
        }
    }
}

const MS_PER_DAY: f64 = 86_400_000.0;
/// Smallest weight used in log space (importance 0 would be ln 0).
const MIN_WEIGHT: f64 = 1e-6;

impl ForgetPolicy {
    /// No forgetting at all.
    pub fn disabled() -> Self {
        ForgetPolicy {
            enabled: false,
            ..Default::default()
        }
    }

    /// Checks the thresholds and factors.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let (t1, t2) = (self.working_threshold, self.forget_threshold);
        if !(t2 > 0.0 && t2 < t1 && t1 <= 1.0) {
            return Err(format!(
                "thresholds need 0 < θ2 < θ1 ≤ 1, got θ1 = {t1}, θ2 = {t2}"
            ));
        }
        if !(self.growth >= 1.0 && self.growth.is_finite()) {
            return Err(format!("growth {} must be ≥ 1", self.growth));
        }
        if self
            .strength_days
            .iter()
            .any(|d| !(*d > 0.0 && d.is_finite()))
        {
            return Err("every strength must be a positive number of days".into());
        }
        Ok(())
    }

    /// Initial strength S (ms) for a memory of `kind` and `importance`.
    pub fn initial_strength_ms(&self, kind: Kind, importance: f32) -> f64 {
        let days = self.strength_days[kind as usize];
        days * MS_PER_DAY * (0.5 + f64::from(importance.clamp(0.0, 1.0)))
    }

    /// The strength of `d` in ms (its own, or the default when unset).
    pub(crate) fn strength_ms(&self, d: &DecayFields) -> f64 {
        if d.strength > 0.0 {
            d.strength * 1000.0
        } else {
            self.initial_strength_ms(d.kind, d.importance)
        }
    }

    fn weight(d: &DecayFields) -> f64 {
        f64::from(d.importance).max(MIN_WEIGHT)
    }

    /// Retention of `item` at `t`.
    pub fn retention(&self, item: &MemoryItem, t: Timestamp) -> f64 {
        self.retention_of(&DecayFields::of(item), t)
    }

    pub(crate) fn retention_of(&self, d: &DecayFields, t: Timestamp) -> f64 {
        let tau = (t - d.anchor).max(0) as f64;
        let (w, s) = (Self::weight(d), self.strength_ms(d));
        match self.model {
            // libm's exp and log (the `libm` crate) rather than the C library's: the same bits
            // on every platform (mingw-w64's differ from glibc's in the last place), so a
            // store answers the same on each.
            DecayModel::Ebbinghaus => w * libm::exp(-tau / s),
            DecayModel::Linear => w - tau / s,
        }
    }

    /// When `item`'s retention reaches `theta` (closed form); `None` if pinned or disabled.
    pub fn crossing(&self, item: &MemoryItem, theta: f64) -> Option<Timestamp> {
        self.crossing_of(&DecayFields::of(item), theta)
    }

    /// When a working memory leaves working memory: where its retention crosses θ1, or where
    /// its validity ends if that comes first; `None` for a long-term memory or one that never
    /// will.
    pub(crate) fn leaves_working(&self, d: &DecayFields) -> Option<Timestamp> {
        if d.tier != Tier::Working {
            return None;
        }
        match (self.crossing_of(d, self.working_threshold), d.valid_until) {
            (Some(decayed), Some(ended)) => Some(decayed.min(ended)),
            (decayed, ended) => decayed.or(ended),
        }
    }

    pub(crate) fn crossing_of(&self, d: &DecayFields, theta: f64) -> Option<Timestamp> {
        if d.pinned || !self.enabled {
            return None;
        }
        let (w, s) = (Self::weight(d), self.strength_ms(d));
        if w <= theta {
            return Some(d.anchor);
        }
        let tau = match self.model {
            DecayModel::Ebbinghaus => s * libm::log(w / theta),
            DecayModel::Linear => s * (w - theta),
        };
        Some(
            d.anchor
                .saturating_add(tau.ceil().min(i64::MAX as f64 / 2.0) as i64),
        )
    }

    /// The queue key of `item` as a line in seconds (log space for Ebbinghaus): its order is
    /// the order of retentions at every time.
    pub(crate) fn line(&self, d: &DecayFields) -> Line {
        let w = Self::weight(d);
        let slope = -1000.0 / self.strength_ms(d);
        let v0 = match self.model {
            DecayModel::Ebbinghaus => libm::log(w),
            DecayModel::Linear => w,
        };
        Line {
            v0,
            slope,
            t0: d.anchor as f64 / 1000.0,
        }
    }

    /// Restarts `item`'s decay at `now` with a stronger memory (spaced repetition).
    pub(crate) fn reinforce(&self, item: &mut MemoryItem, now: Timestamp) {
        item.strength = self.strength_ms(&DecayFields::of(item)) * self.growth / 1000.0;
        item.decay_anchor = now.max(item.decay_anchor);
        item.reinforced = item.reinforced.saturating_add(1);
        item.tier = Tier::Working;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::MemoryId;
    use crate::item::NewMemory;

    #[test]
    fn crossings_are_where_retention_meets_the_threshold() {
        for model in [DecayModel::Ebbinghaus, DecayModel::Linear] {
            let p = ForgetPolicy {
                model,
                ..Default::default()
            };
            let mut item = NewMemory::new("x")
                .importance(0.8)
                .into_item(MemoryId::new(1), 1_000);
            item.strength = 3600.0;
            for theta in [0.5, 0.3, 0.02] {
                let t = p.crossing(&item, theta).unwrap();
                assert!(p.retention(&item, t - 1) > theta, "{model:?} {theta}");
                assert!(
                    p.retention(&item, t + 1) <= theta + 1e-9,
                    "{model:?} {theta}"
                );
            }
            item.pinned = true;
            assert_eq!(p.crossing(&item, 0.3), None);
        }
    }

    #[test]
    fn line_order_is_retention_order() {
        let p = ForgetPolicy::default();
        let mut a = NewMemory::new("a")
            .importance(0.9)
            .into_item(MemoryId::new(1), 0);
        a.strength = 100.0;
        let mut b = NewMemory::new("b")
            .importance(0.3)
            .into_item(MemoryId::new(2), 50_000);
        b.strength = 1000.0;
        for t in [60_000i64, 200_000, 900_000, 5_000_000] {
            let (ra, rb) = (p.retention(&a, t), p.retention(&b, t));
            let ts = t as f64 / 1000.0;
            let (ka, kb) = (
                p.line(&DecayFields::of(&a)).eval(ts),
                p.line(&DecayFields::of(&b)).eval(ts),
            );
            assert_eq!(ra < rb, ka < kb, "at {t}");
        }
    }
}
