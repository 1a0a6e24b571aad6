//! [`Memory::call`] and [`Memory::call_told`]: every operation of the registry as one call on
//! the handle, with the answer every door returns.

use crate::error::Result;
use crate::memory::Memory;

use super::registry::{self, Answer, Request, Told};

impl Memory {
    /// Runs one operation of the registry: the one entry every door's generic call goes
    /// through, so each door returns the same answer. Scoped requests act within the scope
    /// they name (a memory outside it is not found).
    ///
    /// # Errors
    /// The operation's own: [`crate::Error::InvalidInput`] for a request that does not check,
    /// [`crate::Error::NotFound`] for an id outside the store or the scope, and the store's.
    pub fn call(&self, request: Request) -> Result<Answer> {
        registry::run(self, request)
    }

    /// Runs one operation as [`Memory::call`] does, and writes its answer as text for a model
    /// too (what MCP sends beside the structured answer), from the operation's own rendering.
    ///
    /// # Errors
    /// As [`Memory::call`].
    pub fn call_told(&self, request: Request) -> Result<Told> {
        registry::run_told(self, request)
    }
}
