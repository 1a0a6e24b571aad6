//! Engine integration tests: one binary, one module per topic.

mod common;
mod concurrent;
mod dedup;
mod filters;
mod faults;
mod forgetting;
mod hostile_files;
mod memory_loop;
mod model;
mod persist;
mod transfer;
