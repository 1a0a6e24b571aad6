//! Forgetting: decay models and policy, the kinetic queue that finds the least retained
//! memory at any time, and the deadline indexes that fire tier changes; `sweep.rs` applies
//! them to the store.

mod erase;
pub mod kinetic;
mod policy;
pub(crate) mod state;
mod sweep;

pub use erase::ScopeErasure;
pub(crate) use policy::DecayFields;
pub use policy::{DecayModel, ForgetPolicy};
pub use state::ForgetReason;
pub use sweep::{DecayReport, ForgetEvent, SweepReport};
