//! Content hashes: what de-duplication compares (namespace, scope, kind, text; for a turn,
//! where it was said).

use sha2::{Digest, Sha256};

use super::{Kind, Source};

/// sha256 of namespace, kind and text, separated so no two triples collide.
pub fn content_hash(namespace: &str, kind: Kind, text: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((namespace.len() as u64).to_le_bytes());
    h.update(namespace.as_bytes());
    h.update([kind.code()]);
    h.update(text.as_bytes());
    h.finalize().into()
}

/// [`content_hash`] of a memory that belongs to a scope (user, agent, session): the same as
/// `content_hash` when it belongs to no one, so stores written before scopes keep their hashes;
/// otherwise the scope is hashed in too, so equal texts of two scopes never merge.
fn scoped_content_hash(
    namespace: &str,
    scope: [Option<&str>; 3],
    kind: Kind,
    text: &str,
) -> [u8; 32] {
    if scope.iter().all(Option::is_none) {
        return content_hash(namespace, kind, text);
    }
    let mut h = Sha256::new();
    h.update(b"scoped\0");
    for field in scope {
        match field {
            Some(name) => {
                h.update([1]);
                h.update((name.len() as u64).to_le_bytes());
                h.update(name.as_bytes());
            }
            None => h.update([0]),
        }
    }
    h.update(content_hash(namespace, kind, text));
    h.finalize().into()
}

/// The hash duplicates are found by: [`scoped_content_hash`], and for a turn also where it was
/// said (its first source).
pub(crate) fn memory_hash(
    namespace: &str,
    scope: [Option<&str>; 3],
    kind: Kind,
    text: &str,
    first_source: Option<&Source>,
) -> [u8; 32] {
    at_turn(
        scoped_content_hash(namespace, scope, kind, text),
        kind,
        first_source,
    )
}

/// A turn is an event, not a statement: the same words said at two places of a conversation
/// are two memories. A turn's hash therefore also covers where it was said (its first source:
/// the session and turn number); any other memory's hash is `hash` unchanged.
fn at_turn(hash: [u8; 32], kind: Kind, source: Option<&Source>) -> [u8; 32] {
    let Some(source) = source.filter(|_| kind == Kind::Turn) else {
        return hash;
    };
    let mut h = Sha256::new();
    h.update(b"turn\0");
    h.update(hash);
    h.update((source.document.len() as u64).to_le_bytes());
    h.update(source.document.as_bytes());
    let (start, end) = source.span.unwrap_or((u64::MAX, u64::MAX));
    h.update(start.to_le_bytes());
    h.update(end.to_le_bytes());
    h.finalize().into()
}
