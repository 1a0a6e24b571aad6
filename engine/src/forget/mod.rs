//! Forgetting: decay models, the kinetic queue that finds the least important memory at any
//! time, and the deadline index that fires tier changes.

pub mod kinetic;
