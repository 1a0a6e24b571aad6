//! Applying the forgetting policy: sweeps, the forgetting log, decay explanations.

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::decay::ForgetReason;
use crate::error::Result;
use crate::item::{Kind, MemoryId, Tier};
use crate::memory::lineage::Unlinker;
use crate::memory::views::{Admin, Scoped};
use crate::memory::{Inner, Memory};

/// What one sweep moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SweepReport {
    /// The time it applied the policy at.
    pub at: Timestamp,
    /// Working → long-term.
    pub demoted: usize,
    /// Deleted because retention fell below θ2.
    pub forgotten: usize,
    /// Deleted because a capacity was exceeded (least retained first).
    pub evicted: usize,
}

/// One recorded demotion or deletion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForgetEvent {
    /// The memory.
    pub id: MemoryId,
    /// When.
    pub at: Timestamp,
    /// Why.
    pub reason: ForgetReason,
    /// Its retention then.
    pub value: f64,
    /// The threshold it crossed (θ1, θ2), or the capacity for evictions.
    pub threshold: f64,
    /// Its kind.
    pub kind: Kind,
    /// Its namespace.
    pub namespace: String,
    /// The start of its text (at most 80 characters: the log does not keep forgotten content).
    pub text: String,
    /// Its user, agent and session (so erasing a scope finds its events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Its agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// A memory's decay, now and ahead.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DecayReport {
    /// The memory.
    pub id: MemoryId,
    /// Now: the time the report is for (ms).
    pub at: Timestamp,
    /// Retention now.
    pub value: f64,
    /// Tier now.
    pub tier: Tier,
    /// Strength S in seconds.
    pub strength_s: f64,
    /// When its decay clock last restarted.
    pub anchor: Timestamp,
    /// Times reinforced.
    pub reinforced: u32,
    /// Pinned memories never decay.
    pub pinned: bool,
    /// When it leaves working memory: where it crosses θ1, or where its validity ends if that
    /// comes first; `None` if it never will or already has.
    pub demote_at: Option<Timestamp>,
    /// When it crosses θ2 (is forgotten); `None` if it never will.
    pub forget_at: Option<Timestamp>,
    /// When what it says stopped (or stops) holding, if it does.
    pub valid_until: Option<Timestamp>,
    /// θ1: below it a working memory is demoted.
    pub working_threshold: f64,
    /// θ2: below it a memory is forgotten.
    pub forget_threshold: f64,
    /// Its retention over time, [`CURVE_POINTS`] points evenly spaced from its anchor to past
    /// the later of now and its forgetting (what an inspector draws; each point is the policy's
    /// own value at that time).
    pub curve: Vec<RetentionPoint>,
}

/// The number of points in [`DecayReport::curve`].
pub const CURVE_POINTS: usize = 64;

/// A memory's retention at one time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RetentionPoint {
    /// The time (ms since the epoch).
    pub at: Timestamp,
    /// Its retention then.
    pub value: f64,
}

/// The span a retention curve covers: from the anchor to a fifth past the later of now and the
/// forgetting (or, for a memory never forgotten, three strengths past the anchor).
fn curve_end(
    anchor: Timestamp,
    now: Timestamp,
    forget_at: Option<Timestamp>,
    strength_s: f64,
) -> Timestamp {
    let strength_ms = (strength_s * 1000.0).min(1e15) as Timestamp;
    let last = forget_at
        .unwrap_or_else(|| anchor.saturating_add(strength_ms.saturating_mul(3)))
        .max(now);
    let span = last.saturating_sub(anchor).max(1);
    anchor.saturating_add(span.saturating_add(span / 5))
}

impl Memory {
    /// [`crate::Admin::sweep`] for one scope's memories: demotions and deletions due to them, and
    /// [`crate::ForgetPolicy::capacity_per_user`] for the scope's user when it names one. The
    /// namespace and store-wide capacities span scopes: only [`crate::Admin::sweep`] applies them.
    ///
    /// # Errors
    /// As [`crate::Admin::sweep`]; [`crate::Error::InvalidInput`] for a scope with no field or an
    /// empty name in it.
    pub(crate) fn sweep_scope(&self, scope: &crate::item::Scope) -> Result<SweepReport> {
        scope.require_named("sweep_scope (Admin::sweep sweeps all)")?;
        self.inner.sweep(Some(scope))
    }
}

impl Inner {
    /// Sweeps if something is due (cheap check); errors are left for the next sweep.
    pub(crate) fn maybe_sweep(&self) {
        let now = self.now();
        let due = self
            .catalog
            .try_get()
            .is_some_and(|c| c.read().sweep_due(now));
        if due {
            // The write that triggered it has committed and stands; a failed sweep is kept for
            // `flush` to report, like a background failure, and retried after the next write.
            if let Err(e) = self.sweep(None) {
                *self.background_error.lock() = Some(format!("sweep after a write failed: {e}"));
            }
        }
    }

    pub(crate) fn sweep(&self, scope: Option<&crate::item::Scope>) -> Result<SweepReport> {
        let now = self.now();
        let mut report = SweepReport {
            at: now,
            ..Default::default()
        };
        if !self.options.forgetting.enabled {
            return Ok(report);
        }
        let catalog = self.catalog.get()?;
        self.write(|inner, tx, applied| {
            let moves = catalog.write().plan_sweep(now, scope);
            // A version forgotten closes the gap it leaves in its lineage (sync's merge
            // rules); a demoted one is read as that left it.
            let mut lineage = Unlinker::new(&inner.store);
            for m in moves {
                let Some(mut item) = lineage.get(m.id)? else {
                    continue;
                };
                let event = ForgetEvent {
                    id: m.id,
                    at: now,
                    reason: m.reason,
                    value: m.value,
                    threshold: m.threshold,
                    kind: item.kind,
                    namespace: item.namespace.clone(),
                    text: item.text.chars().take(80).collect(),
                    user: item.user.clone(),
                    agent: item.agent.clone(),
                    session: item.session.clone(),
                };
                let json = serde_json::to_vec(&event).expect("events always serialise");
                tx.log_forget(now, m.id, item.user.as_deref(), &json)?;
                match m.reason {
                    ForgetReason::Demoted | ForgetReason::Expired => {
                        item.tier = Tier::LongTerm;
                        lineage.change(item);
                        report.demoted += 1;
                    }
                    ForgetReason::Decayed | ForgetReason::Evicted => {
                        lineage.unlink(tx, item.id)?;
                        tx.delete(&item)?;
                        applied.removed.push(m.id);
                        if m.reason == ForgetReason::Decayed {
                            report.forgotten += 1;
                        } else {
                            report.evicted += 1;
                        }
                    }
                }
            }
            lineage.finish(tx, applied)?;
            tx.prune_forget_log(inner.options.forgetting.log_limit)?;
            Ok(())
        })?;
        Ok(report)
    }
}

impl<'a> Admin<'a> {
    /// The demotions and deletions recorded at or after `since`, oldest first.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn forgotten(&self, since: Timestamp) -> Result<Vec<ForgetEvent>> {
        let store = &self.memory.inner.store;
        store
            .forget_log_since(since)?
            .iter()
            .map(|v| {
                serde_json::from_slice(v).map_err(|e| store.corrupt(format!("forget log: {e}")))
            })
            .collect()
    }

    /// Applies the forgetting policy at the clock's current time: demotes memories below θ1,
    /// deletes those below θ2 and, over capacity, the least retained — durably, recording each
    /// move (see [`Admin::forgotten`]). Also runs after writes when something is due.
    ///
    /// # Errors
    /// [`crate::Error::Store`] / [`crate::Error::Index`]; nothing moved then.
    pub fn sweep(&self) -> Result<SweepReport> {
        self.memory.inner.sweep(None)
    }

    /// Memory `id`'s retention now, tier, and when it will cross θ1 and θ2.
    ///
    /// # Errors
    /// [`crate::error::Error::NotFound`].
    pub fn explain_decay(&self, id: MemoryId) -> Result<DecayReport> {
        self.memory
            .scoped(&crate::item::Scope::default())
            .explain_decay(id)
    }
}

impl<'a> Scoped<'a> {
    /// [`Admin::explain_decay`] for a caller confined to `scope`: a memory outside it is
    /// not found.
    ///
    /// # Errors
    /// [`crate::error::Error::NotFound`].
    pub fn explain_decay(&self, id: MemoryId) -> Result<DecayReport> {
        let scope = &self.scope;
        let item = self
            .memory
            .inner
            .current_in(id, scope)?
            .ok_or(crate::error::Error::NotFound(id))?;
        let p = &self.memory.inner.options.forgetting;
        let now = self.memory.inner.now();
        let future = |t: Option<Timestamp>| t.filter(|&t| t > now);
        let strength_s = p.strength_ms(&crate::decay::DecayFields::of(&item)) / 1000.0;
        let forget_at = p.crossing(&item, p.forget_threshold);
        let end = curve_end(item.decay_anchor, now, forget_at, strength_s);
        let step = (end - item.decay_anchor) as f64 / (CURVE_POINTS - 1) as f64;
        let curve = (0..CURVE_POINTS)
            .map(|i| {
                let at = item.decay_anchor + (step * i as f64).round() as Timestamp;
                RetentionPoint {
                    at,
                    value: p.retention(&item, at),
                }
            })
            .collect();
        Ok(DecayReport {
            id,
            at: now,
            value: p.retention(&item, now),
            tier: item.tier,
            strength_s,
            anchor: item.decay_anchor,
            reinforced: item.reinforced,
            pinned: item.pinned,
            demote_at: future(p.leaves_working(&crate::decay::DecayFields::of(&item))),
            forget_at,
            valid_until: item.valid_until,
            working_threshold: p.working_threshold,
            forget_threshold: p.forget_threshold,
            curve,
        })
    }

    /// A sweep as every door asks for it: [`Scoped::sweep`] for the scope `scope` names, or
    /// [`Admin::sweep`] when it names none.
    ///
    /// # Errors
    /// As [`Scoped::sweep`] and [`Admin::sweep`].
    pub fn sweep(&self) -> Result<SweepReport> {
        let scope = &self.scope;
        if scope.is_empty() {
            self.memory.admin().sweep()
        } else {
            self.memory.sweep_scope(scope)
        }
    }
}
