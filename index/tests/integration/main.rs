//! Integration tests of `memloop-index`: recall against brute force, churn, filters,
//! persistence, corruption and concurrency.

mod churn;
mod common;
mod concurrent;
mod corrupt;
mod encodings;
mod filter;
mod model;
mod near;
mod persist;
mod recall;
