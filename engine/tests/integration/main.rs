//! Engine integration tests: one binary, one module per topic.

mod columnar;
mod common;
mod concurrent;
mod contract;
mod conversations;
mod cross_encoder;
mod dedup;
mod embedder_contract;
mod encryption;
mod faults;
mod filters;
mod forgetting;
mod hostile_columnar;
mod hostile_files;
mod lexical;
mod memory_loop;
mod model;
mod persist;
mod scope_property;
mod scopes;
mod sync;
mod sync_hostile;
mod sync_property;
mod transfer;
mod trust;
mod validity;
