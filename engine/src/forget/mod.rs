//! Forgetting: decay models and policy, the kinetic queue that finds the least retained
//! memory at any time, and the deadline indexes that fire tier changes.

pub mod kinetic;
mod policy;
pub(crate) mod state;

pub(crate) use policy::DecayFields;
pub use policy::{DecayModel, ForgetPolicy};
pub use state::ForgetReason;
