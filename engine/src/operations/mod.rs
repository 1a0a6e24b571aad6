//! The operation registry, at the top of the engine: one file per operation, each implementing
//! [`Operate`] (its name, the doc a model or a person reads, whether it acts within a caller's
//! scope, whether it only reads, the doors it is absent from and why, its typed request and
//! answer, the engine call that runs it and the text a model reads), and one list
//! (`registry.rs`) from which [`Operation`], [`Operation::ALL`], the [`Request`] and [`Answer`]
//! enums, [`Request::parse`], both JSON schemas and [`crate::Memory::call`] are generated.
//! Adding an operation is one file, its `mod` line below and its line in that list; an
//! operation missing a property does not compile, and no `match` over the operations is
//! written by hand.
//!
//! MCP's tools, the CLI's forwarded commands, the shared store's socket, the inspector's
//! actions, the C, Python and Node doors' generic `call` and the contract table are built from
//! this list. Every door returns what [`crate::Memory::call`] returns, serialised by serde as each
//! answer type writes it (Node's door renames the fields to camelCase): a forwarded call and a
//! direct one print the same bytes. Each answer's JSON schema ([`Operation::answer_schema`], of
//! what serde writes) is MCP's output schema for the tool, so a client checks every answer
//! against it.

mod call;

mod context;
mod explain_decay;
mod export;
mod feedback;
mod forget;
mod get;
mod import;
mod list;
mod observe;
mod recall;
mod record_task;
mod remember;
mod remember_conversation;
mod stats;
mod sweep;
mod sync;
mod update;

mod operate;
mod registry;

pub use forget::{ForgetAnswer, Forgotten};
pub use list::Listed;
pub use observe::Observed;
pub use operate::Operate;
pub use recall::Recalled;
pub use registry::{Answer, Operation, Request, Told};
pub use update::Updated;

#[cfg(test)]
mod tests;
