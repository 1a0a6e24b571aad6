//! The in-memory catalog: for every live memory, the fields filters test, so a filtered search
//! evaluates its predicate without touching the database.
//!
//! Loaded on open from the `catalog` table (a compact record per item); kept in step by the
//! writer after each commit. Namespaces and tags are interned to `u32`s.

use rustc_hash::FxHashMap;

use crate::clock::Timestamp;
use crate::decay::state::{Counts, Forgetting, GroupCounts, ScopeSweep};
use crate::decay::ForgetPolicy;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::item::{Kind, MemoryId, MemoryItem, Scope};
use crate::store::{CatalogRecord, Store};

/// One memory's filterable fields.
#[derive(Debug, Clone)]
struct Entry {
    kind: Kind,
    flags: u8,
    created: Timestamp,
    namespace: u32,
    tags: Box<[u32]>,
    tier: crate::item::Tier,
    /// User, agent, session: interned names, [`NO_NAME`] where absent.
    scope: [u32; 3],
    /// Valid in `[valid_from, valid_until)`; `Timestamp::MAX` when it never ended.
    valid_from: Timestamp,
    valid_until: Timestamp,
}

/// A scope field a memory leaves out.
const NO_NAME: u32 = u32::MAX;

/// A filter resolved against the catalog's interned names.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    namespace: Option<u32>,
    kinds: u16,
    tags: Vec<u32>,
    from: Timestamp,
    until: Timestamp,
    include_superseded: bool,
    /// Per scope field: `None` any, `Some(NO_NAME)` only memories without it, else that name.
    scope: [Option<u32>; 3],
    /// Only what was valid then (superseded versions included).
    as_of: Option<Timestamp>,
}

/// How a store's current memories divide: by kind, tier, user and namespace (superseded
/// versions counted apart).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Census {
    /// Current memories (superseded versions not included).
    pub current: usize,
    /// Superseded versions kept as history.
    pub superseded: usize,
    /// Current memories per kind, by the kind's name.
    pub by_kind: std::collections::BTreeMap<String, usize>,
    /// Current memories per tier (`working`, `long_term`).
    pub by_tier: std::collections::BTreeMap<String, usize>,
    /// Current memories per user; those of no user under the empty name.
    pub by_user: std::collections::BTreeMap<String, usize>,
    /// Current memories per namespace.
    pub by_namespace: std::collections::BTreeMap<String, usize>,
}

/// Filterable fields of every live memory, and their forgetting state.
#[derive(Debug)]
pub(crate) struct Catalog {
    entries: FxHashMap<MemoryId, Entry>,
    names: Vec<String>,
    ids: FxHashMap<String, u32>,
    superseded: usize,
    /// Live memories per namespace, and those over `capacity_per_namespace`.
    per_namespace: GroupCounts,
    /// Live memories per user (memories of no user are not counted), and those over
    /// `capacity_per_user`.
    per_user: GroupCounts,
    tiers: [usize; 2],
    pub(crate) forgetting: Forgetting,
}

impl Catalog {
    /// Loads the catalog table.
    pub(crate) fn load(store: &Store, policy: ForgetPolicy, now: Timestamp) -> Result<Catalog> {
        let mut cat = Catalog {
            entries: FxHashMap::default(),
            names: Vec::new(),
            ids: FxHashMap::default(),
            superseded: 0,
            per_namespace: GroupCounts::new(policy.capacity_per_namespace),
            per_user: GroupCounts::new(policy.capacity_per_user),
            tiers: [0; 2],
            forgetting: Forgetting::new(policy, now),
        };
        store.for_each_catalog_record(|id, rec, len| {
            if cat.entries.is_empty() {
                cat.entries.reserve(len);
            }
            cat.insert(id, rec);
        })?;
        Ok(cat)
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_string());
        self.ids.insert(s.to_string(), i);
        i
    }

    fn insert(&mut self, id: MemoryId, rec: &CatalogRecord<'_>) {
        let namespace = self.intern(rec.namespace);
        let tags = rec.tags.iter().map(|t| self.intern(t)).collect();
        let scope = rec
            .scope
            .map(|f| f.map_or(NO_NAME, |name| self.intern(name)));
        let entry = Entry {
            kind: rec.kind,
            flags: rec.flags,
            created: rec.created,
            namespace,
            tags,
            tier: rec.decay.tier,
            scope,
            valid_from: rec.valid_from,
            valid_until: rec.valid_until.unwrap_or(Timestamp::MAX),
        };
        self.remove(id);
        if entry.flags & crate::store::record::SUPERSEDED != 0 {
            self.superseded += 1;
        }
        self.per_namespace.add(namespace);
        if scope[0] != NO_NAME {
            self.per_user.add(scope[0]);
        }
        self.tiers[rec.decay.tier as usize] += 1;
        self.forgetting.upsert(id, namespace, scope[0], rec.decay);
        self.entries.insert(id, entry);
    }

    /// How the current memories divide (one pass over the catalog, no database read).
    pub(crate) fn census(&self) -> Census {
        let mut c = Census {
            superseded: self.superseded,
            ..Census::default()
        };
        let name = |i: u32| {
            if i == NO_NAME {
                String::new()
            } else {
                self.names[i as usize].clone()
            }
        };
        let mut by_kind = FxHashMap::<Kind, usize>::default();
        let mut by_tier = [0usize; 2];
        let mut by_user = FxHashMap::<u32, usize>::default();
        let mut by_namespace = FxHashMap::<u32, usize>::default();
        for e in self.entries.values() {
            if e.flags & crate::store::record::SUPERSEDED != 0 {
                continue;
            }
            c.current += 1;
            *by_kind.entry(e.kind).or_default() += 1;
            by_tier[e.tier as usize] += 1;
            *by_user.entry(e.scope[0]).or_default() += 1;
            *by_namespace.entry(e.namespace).or_default() += 1;
        }
        c.by_kind = by_kind
            .into_iter()
            .map(|(k, n)| (k.name().to_string(), n))
            .collect();
        c.by_tier = [crate::item::Tier::Working, crate::item::Tier::LongTerm]
            .into_iter()
            .map(|t| (t.name().to_string(), by_tier[t as usize]))
            .collect();
        c.by_user = by_user.into_iter().map(|(u, n)| (name(u), n)).collect();
        c.by_namespace = by_namespace
            .into_iter()
            .map(|(ns, n)| (name(ns), n))
            .collect();
        c
    }

    /// Records `item`'s current fields.
    pub(crate) fn upsert(&mut self, item: &MemoryItem) {
        self.insert(item.id, &CatalogRecord::of(item));
    }

    /// Forgets `id`.
    pub(crate) fn remove(&mut self, id: MemoryId) {
        if let Some(old) = self.entries.remove(&id) {
            if old.flags & crate::store::record::SUPERSEDED != 0 {
                self.superseded -= 1;
            }
            self.per_namespace.sub(old.namespace);
            if old.scope[0] != NO_NAME {
                self.per_user.sub(old.scope[0]);
            }
            self.tiers[old.tier as usize] -= 1;
            self.forgetting.remove(id);
        }
    }

    /// True if a sweep at `now` would move something.
    pub(crate) fn sweep_due(&self, now: Timestamp) -> bool {
        let counts = Counts {
            live: self.entries.len(),
            namespaces: &self.per_namespace,
            users: &self.per_user,
        };
        self.forgetting.due(now, &counts)
    }

    /// Plans a sweep at `now` of every memory, or of `scope`'s (see `Forgetting::plan`).
    pub(crate) fn plan_sweep(
        &mut self,
        now: Timestamp,
        scope: Option<&Scope>,
    ) -> Vec<crate::decay::state::Move> {
        let mut want = [None; 3];
        if let Some(scope) = scope {
            for (slot, name) in want.iter_mut().zip(scope.fields()) {
                if let Some(name) = name {
                    // A name never seen has no memories to sweep.
                    let Some(&id) = self.ids.get(name) else {
                        return Vec::new();
                    };
                    *slot = Some(id);
                }
            }
        }
        // Disjoint fields: the entries and counts are read while the forgetting state changes.
        let entries = &self.entries;
        let holds = |id: MemoryId| {
            entries.get(&id).is_some_and(|e| {
                want.iter()
                    .zip(e.scope)
                    .all(|(w, has)| w.is_none_or(|w| w == has))
            })
        };
        let only = scope.map(|_| ScopeSweep {
            holds: &holds,
            user: want[0],
        });
        let counts = Counts {
            live: entries.len(),
            namespaces: &self.per_namespace,
            users: &self.per_user,
        };
        self.forgetting.plan(now, &counts, only)
    }

    /// Memories per tier: [working, long-term].
    pub(crate) fn tiers(&self) -> [usize; 2] {
        self.tiers
    }

    /// Resolves `f`; `None` when it can match nothing (an unknown namespace or tag).
    pub(crate) fn compile(&self, f: &MemoryFilter) -> Option<Compiled> {
        let namespace = match &f.namespace {
            Some(ns) => Some(*self.ids.get(ns.as_str())?),
            None => None,
        };
        let tags = f
            .tags
            .iter()
            .map(|t| self.ids.get(t.as_str()).copied())
            .collect::<Option<Vec<u32>>>()?;
        let kinds = f.kinds.iter().fold(0u16, |m, k| m | 1 << k.code());
        let mut scope = [None; 3];
        for (slot, name) in scope.iter_mut().zip(f.scope_fields()) {
            if let Some(name) = name {
                *slot = Some(*self.ids.get(name)?);
            }
        }
        Some(Compiled {
            namespace,
            kinds: if kinds == 0 { u16::MAX } else { kinds },
            tags,
            from: f.created_from.unwrap_or(Timestamp::MIN),
            until: f.created_until.unwrap_or(Timestamp::MAX),
            include_superseded: f.include_superseded,
            scope,
            as_of: f.as_of,
        })
    }

    /// Resolves `f` and narrows it to memories of exactly `scope`: a field `scope` leaves out
    /// must be absent too (what near-duplicate detection compares within); `None` when nothing
    /// can match.
    pub(crate) fn compile_exact_scope(
        &self,
        f: &MemoryFilter,
        scope: [Option<&str>; 3],
    ) -> Option<Compiled> {
        let mut c = self.compile(f)?;
        for (slot, name) in c.scope.iter_mut().zip(scope) {
            *slot = Some(match name {
                Some(name) => *self.ids.get(name)?,
                None => NO_NAME,
            });
        }
        Some(c)
    }

    /// True if `c` lets everything through (so a search needs no predicate).
    pub(crate) fn passes_all(&self, c: &Compiled) -> bool {
        c.namespace.is_none()
            && c.kinds == u16::MAX
            && c.tags.is_empty()
            && c.from == Timestamp::MIN
            && c.until == Timestamp::MAX
            && c.scope.iter().all(Option::is_none)
            && c.as_of.is_none()
            && (c.include_superseded || self.superseded == 0)
    }

    /// True if memory `id` passes `c`.
    pub(crate) fn allows(&self, c: &Compiled, id: MemoryId) -> bool {
        let Some(e) = self.entries.get(&id) else {
            return false;
        };
        let current = match c.as_of {
            Some(t) => (e.valid_from..e.valid_until).contains(&t),
            None => c.include_superseded || e.flags & crate::store::record::SUPERSEDED == 0,
        };
        current
            && c.namespace.is_none_or(|ns| ns == e.namespace)
            && c.kinds & (1 << e.kind.code()) != 0
            && (c.from..c.until).contains(&e.created)
            && c.tags.iter().all(|t| e.tags.contains(t))
            && c.scope
                .iter()
                .zip(e.scope)
                .all(|(want, has)| want.is_none_or(|w| w == has))
    }

    /// True if memory `id`'s validity began in `[start, end)` (for a turn: it was spoken then).
    pub(crate) fn began_in(&self, id: MemoryId, start: Timestamp, end: Timestamp) -> bool {
        self.entries
            .get(&id)
            .is_some_and(|e| (start..end).contains(&e.valid_from))
    }

    /// Ids passing `c`, ascending.
    pub(crate) fn matching(&self, c: &Compiled) -> Vec<MemoryId> {
        let mut ids: Vec<MemoryId> = self
            .entries
            .keys()
            .copied()
            .filter(|&id| self.allows(c, id))
            .collect();
        ids.sort_unstable();
        ids
    }
}

/// Why the catalog could not be loaded, kept for every later caller.
enum LoadFailure {
    /// The key file is not the store's current one (a key error, not damage).
    Key {
        path: std::path::PathBuf,
        detail: String,
    },
    /// Anything else: the store is damaged.
    Other(String),
}

impl LoadFailure {
    /// What a load's error `e` is kept as.
    fn of(e: crate::error::Error) -> LoadFailure {
        match e {
            crate::error::Error::Key(crate::crypt::KeyError::Wrong { path, detail }) => {
                LoadFailure::Key { path, detail }
            }
            e => LoadFailure::Other(e.to_string()),
        }
    }
}

/// The catalog, loaded on a background thread so opening a store does not wait for it; the
/// first operation that needs it waits for the load.
pub(crate) struct CatalogSlot {
    ready: std::sync::OnceLock<parking_lot::RwLock<Catalog>>,
    loading: parking_lot::Mutex<Option<std::thread::JoinHandle<Result<Catalog>>>>,
    failed: std::sync::OnceLock<LoadFailure>,
    path: std::path::PathBuf,
    /// Changes made before the load finished (a recall's reinforcements), applied to the
    /// loaded catalog before anyone sees it.
    deferred: parking_lot::Mutex<Vec<MemoryItem>>,
}

impl CatalogSlot {
    /// Starts loading the catalog of `store`. Writers must wait for [`CatalogSlot::get`]
    /// before committing, so the loaded snapshot misses no write.
    pub(crate) fn load_in_background(
        store: std::sync::Arc<Store>,
        policy: ForgetPolicy,
        now: Timestamp,
    ) -> Self {
        let path = store.path.clone();
        let (ready, failed) = (std::sync::OnceLock::new(), std::sync::OnceLock::new());
        let loading = if crate::platform::THREADS {
            let handle = std::thread::Builder::new()
                .name("memloop-catalog".into())
                .spawn(move || Catalog::load(&store, policy, now));
            handle
                .map_err(|e| {
                    let _ = failed.set(LoadFailure::Other(format!(
                        "cannot start the catalog loader: {e}"
                    )));
                })
                .ok()
        } else {
            // No thread to load it aside on: loaded now.
            match Catalog::load(&store, policy, now) {
                Ok(catalog) => {
                    let _ = ready.set(parking_lot::RwLock::new(catalog));
                }
                Err(e) => {
                    let _ = failed.set(LoadFailure::of(e));
                }
            }
            None
        };
        CatalogSlot {
            ready,
            loading: parking_lot::Mutex::new(loading),
            failed,
            path,
            deferred: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// Upserts `items` into the catalog now if it is loaded, else as soon as it is — so a
    /// recall right after open records its reinforcements without waiting for the load. (The
    /// load reads the database as it was at open, and no write commits before the load is
    /// done, so these later states are the newest.)
    pub(crate) fn upsert_or_defer(&self, items: Vec<MemoryItem>) {
        let mut deferred = self.deferred.lock();
        match self.ready.get() {
            Some(c) => {
                drop(deferred);
                let mut cat = c.write();
                for item in &items {
                    cat.upsert(item);
                }
            }
            None => deferred.extend(items),
        }
    }

    /// The catalog if it is loaded already.
    pub(crate) fn try_get(&self) -> Option<&parking_lot::RwLock<Catalog>> {
        self.ready.get()
    }

    /// The catalog, waiting for the load.
    pub(crate) fn get(&self) -> Result<&parking_lot::RwLock<Catalog>> {
        if let Some(c) = self.ready.get() {
            return Ok(c);
        }
        let mut loading = self.loading.lock();
        if let Some(c) = self.ready.get() {
            return Ok(c);
        }
        if let Some(handle) = loading.take() {
            match handle.join() {
                Ok(Ok(mut cat)) => {
                    // Published while `deferred` is held: a change is either drained here or
                    // sees the catalog ready and applies itself after.
                    let mut deferred = self.deferred.lock();
                    for item in deferred.drain(..) {
                        cat.upsert(&item);
                    }
                    let _ = self.ready.set(parking_lot::RwLock::new(cat));
                    drop(deferred);
                    return Ok(self.ready.get().expect("just set"));
                }
                Ok(Err(e)) => {
                    let _ = self.failed.set(LoadFailure::of(e));
                }
                Err(_) => {
                    let _ = self
                        .failed
                        .set(LoadFailure::Other("the catalog loader panicked".into()));
                }
            }
        }
        Err(match self.failed.get() {
            Some(LoadFailure::Key { path, detail }) => {
                crate::error::Error::Key(crate::crypt::KeyError::Wrong {
                    path: path.clone(),
                    detail: detail.clone(),
                })
            }
            Some(LoadFailure::Other(detail)) => crate::error::Error::Corrupt {
                path: self.path.clone(),
                detail: detail.clone(),
            },
            None => crate::error::Error::Corrupt {
                path: self.path.clone(),
                detail: "catalog unavailable".into(),
            },
        })
    }
}

impl Drop for CatalogSlot {
    fn drop(&mut self) {
        // The loader holds the database open; wait for it so closing a store really closes it.
        if let Some(h) = self.loading.get_mut().take() {
            let _ = h.join();
        }
    }
}
