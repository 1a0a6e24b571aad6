//! No code: this crate's dependencies name, once, every feature that some member of the
//! workspace turns on in a crate another member also uses (written by `cargo hakari generate`
//! from `.config/hakari.toml`). Every member depends on it, so cargo resolves those crates'
//! features the same whichever packages a command selects (`-p memloop`, maturin's build of
//! the Python extension, napi's of the Node addon, the aarch64 smoke set), and compiles each
//! dependency once rather than once a selection.
