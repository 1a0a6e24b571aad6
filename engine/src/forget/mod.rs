//! Forgetting applied to a store: sweeps that demote and delete what decayed (`sweep.rs`)
//! and the erasure of a scope (`erase.rs`). The decay models, the policy and the kinetic
//! queue they use are pure parts in `decay/`.

mod erase;
mod sweep;

pub use crate::decay::kinetic;
pub use crate::decay::{DecayModel, ForgetPolicy, ForgetReason};
pub use erase::ScopeErasure;
pub use sweep::{DecayReport, ForgetEvent, RetentionPoint, SweepReport, CURVE_POINTS};
