//! memloop for Node.js: the engine in-process, through napi-rs.
//!
//! A thin translation onto the engine's request vocabulary (`memloop::requests::RecallRequest`,
//! `ContextParams`, `RememberRequest`, …): the JavaScript option objects are read into those
//! types, which hold every default and check; the answers come back as plain objects with
//! camelCase keys. Every call is a Promise whose work runs on libuv's thread pool, never on
//! the JavaScript thread. Errors carry the engine's error code (`invalid_input`,
//! `not_found`, …), the same as C's and Python's; `index.js` turns them into `MemloopError`
//! subclasses.

mod call;
mod errors;
mod inputs;
mod js_value;
mod memory;
mod model;
mod outputs;

pub use memory::Memory;
pub use model::{fetch_model, FetchedModel};
