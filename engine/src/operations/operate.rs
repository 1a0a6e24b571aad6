//! What every operation of the registry is: the trait [`Operate`] each one implements in a
//! file of its own, and the reasons shared by the doors an operation is absent from.

use std::fmt::Debug;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::Result;
use crate::memory::Memory;
use crate::vocabulary::Door;

/// One operation of the registry: everything the engine and its doors know of it. Each
/// operation implements it on a unit type in a file of its own and is named once in the list
/// that generates the registry (`registry.rs`). Every item is required: an operation that leaves one out does
/// not compile.
///
/// ```compile_fail,E0046
/// // An operation without its doc, scoping, read-only flag or doors is refused by the compiler.
/// use memloop::{Door, Memory, Operate, Result};
///
/// struct Ping;
///
/// impl Operate for Ping {
///     const NAME: &'static str = "ping";
///     type Request = memloop::requests::NoFields;
///     type Answer = u64;
///     fn run(_: &Memory, _: Self::Request) -> Result<u64> {
///         Ok(1)
///     }
///     fn text(_: &Self::Request, answer: &u64) -> String {
///         answer.to_string()
///     }
/// }
/// ```
pub trait Operate {
    /// Its name on every door (MCP's tool, the CLI's JSON call, C's and the bindings' `call`).
    const NAME: &'static str;
    /// What it does, written for a model choosing a tool and a person reading `--help`.
    const DOC: &'static str;
    /// True when its request names the scope (user, agent, session) the caller acts in, so a
    /// caller bound to a scope (a scoped MCP token) may run it within that scope; the others
    /// reach the whole store.
    const SCOPED: bool;
    /// True when running it twice is running it once: it changes no memory (a recall records
    /// access times, which a second recall records again), so a call lost with its connection
    /// may be sent again.
    const READS_ONLY: bool;
    /// Its request, as every door parses it from JSON (unknown fields refused).
    type Request: Serialize + DeserializeOwned + JsonSchema + Clone + Debug + PartialEq;
    /// Its answer, as every door returns it.
    type Answer: Serialize + JsonSchema + Clone + Debug + PartialEq;
    /// `None` when it is on `door`, or the reason it is not.
    fn absent_from(door: Door) -> Option<&'static str>;
    /// Runs it on `memory`.
    ///
    /// # Errors
    /// The operation's own: [`crate::Error::InvalidInput`] for a request that does not check,
    /// [`crate::Error::NotFound`] for an id outside the store or the scope, and the store's.
    fn run(memory: &Memory, request: Self::Request) -> Result<Self::Answer>;
    /// The answer as text for a model (MCP's text content), the request beside it for what the
    /// text repeats.
    fn text(request: &Self::Request, answer: &Self::Answer) -> String;
}

/// Why a file-naming operation is not an MCP tool.
pub(super) const FILES_ON_THE_SERVER: &str =
    "it names a file on the machine serving the store, which an \
MCP client (possibly remote, by URL) must neither read nor write";

/// Why `sync` is neither an MCP tool nor an inspector action.
pub(super) const REMOTES_OF_THE_OWNER: &str =
    "it names a remote (a folder on the machine serving the \
store, or a bucket and endpoint reached from it) that the store's owner chooses, not a client \
reaching it by URL; run `memloop sync` beside the server";

/// Why an operation is not an inspector action.
pub(super) const INSPECTOR_LOOKS: &str =
    "the inspector looks at memories and corrects them (pin, rate, \
edit, forget, erase); writing new ones is an agent's job";
