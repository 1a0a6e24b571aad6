//! The socket a shared store is served on, and who is at its other end: the one platform
//! difference of sharing. Unix: a Unix domain socket in the store directory, mode 0600, the
//! peer's uid read from the kernel. Windows: a named pipe whose name is a hash of the store
//! directory, for this user alone and local clients only, the peer's user read from its
//! process's token.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
