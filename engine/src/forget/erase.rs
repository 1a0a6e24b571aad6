//! Erasing a scope: everything of one user, agent or session, gone from every file of the
//! store — the database (rewritten, so no freed page keeps it), the index file (saved without
//! the erased nodes), the forgetting log and the in-memory lexical index.

use rustc_hash::FxHashSet;
use serde::Serialize;

use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::forget::ForgetEvent;
use crate::invalid::InvalidInput;
use crate::item::{scope_covers, MemoryId, Scope};
use crate::memory::Memory;

/// What [`Memory::forget_scope`] erased.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopeErasure {
    /// The scope erased.
    pub scope: Scope,
    /// Memories deleted, superseded versions included.
    pub memories: usize,
    /// Forgetting-log events deleted (they keep the start of a forgotten memory's text).
    pub log_events: usize,
    /// The database file's length before and after (it is rewritten whatever its free space).
    pub database_bytes: (u64, u64),
}

impl Memory {
    /// Erases every memory of `scope` (each field it sets must match; `Scope::user("ana")`
    /// erases all of Ana's agents and sessions) in every namespace, superseded versions
    /// included, then makes it physical: the forgetting log loses their events, the index is
    /// saved without them and the database file is rewritten, so no file of the store keeps
    /// their text or vectors. Durable on return.
    ///
    /// # Errors
    /// [`InvalidInput::EmptyScope`] for an empty name, [`InvalidInput::Options`] for a scope
    /// with no field (that would erase everything: use a new store); as
    /// [`Memory::checkpoint`] and [`Memory::compact`].
    pub fn forget_scope(&self, scope: &Scope) -> Result<ScopeErasure> {
        scope.validate()?;
        if scope.is_empty() {
            return Err(InvalidInput::Options(
                "forget_scope needs a user, an agent or a session".into(),
            )
            .into());
        }
        let before = self.disk_usage()?.database;
        let filter = MemoryFilter::new()
            .scope(scope.clone())
            .include_superseded(true);
        let (memories, log_events) = self.inner.write(|inner, tx, applied| {
            let ids: Vec<MemoryId> = {
                let cat = inner.catalog.get()?.read();
                cat.compile(&filter)
                    .map(|c| cat.matching(&c))
                    .unwrap_or_default()
            };
            for &id in &ids {
                if let Some(item) = inner.store.item(id)? {
                    tx.delete(&item)?;
                    applied.removed.push(id);
                }
            }
            // Events of memories erased now, and of the scope's memories forgotten before (an
            // event names its scope; one that cannot be read is dropped too, not trusted).
            let gone: FxHashSet<MemoryId> = ids.iter().copied().collect();
            let events = tx.drop_forget_events(|id, event| {
                gone.contains(&id)
                    || serde_json::from_slice::<ForgetEvent>(event).map_or(true, |e| {
                        let has = [e.user.as_deref(), e.agent.as_deref(), e.session.as_deref()];
                        scope_covers(scope.fields(), has)
                    })
            })?;
            Ok((ids.len(), events))
        })?;
        // The save leaves erased nodes out of the index file; the rewrite copies only live
        // records into a fresh database file.
        self.compact()?;
        Ok(ScopeErasure {
            scope: scope.clone(),
            memories,
            log_events,
            database_bytes: (before, self.disk_usage()?.database),
        })
    }
}
