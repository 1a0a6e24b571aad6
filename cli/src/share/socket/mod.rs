//! The socket a shared store is served on, and who is at its other end: the one platform
//! difference of sharing. Unix: a Unix domain socket in the store directory, mode 0600, the
//! peer's uid read from the kernel. Windows: not offered yet (docs/limits.md); a store there is
//! held by one process at a time, and a second gets the engine's "locked" error.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
