//! Scopes (user, agent, session): isolation under interleaved writers, no merging across
//! scopes, and erasure that leaves nothing of a user in any file of the store.

use memloop::{
    context::ContextRequest, Clock, Kind, Memory, MemoryFilter, NewMemory, Query, Scope, Strategy,
};
use proptest::prelude::{prop, proptest, ProptestConfig};

use crate::common::{hashing, open};

/// A store whose near-duplicate threshold the hashing embedder reaches with one word changed.
fn open_loose(dir: &std::path::Path, clock: &Clock) -> Memory {
    let options = memloop::Options {
        dedup_threshold: Some(0.75),
        ..hashing(256, clock)
    };
    Memory::open(dir, options).unwrap()
}

const USERS: [&str; 4] = ["ana", "bo", "cy", "dee"];
const AGENTS: [&str; 2] = ["planner", "coder"];
const WORDS: [&str; 6] = ["tea", "rust", "paris", "cats", "jazz", "chess"];

fn scope(user: usize, agent: usize) -> Scope {
    Scope {
        user: Some(USERS[user].into()),
        agent: Some(AGENTS[agent].into()),
        session: None,
    }
}

fn user_filter(user: usize) -> MemoryFilter {
    MemoryFilter::new().scope(Scope::user(USERS[user]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Users and agents write interleaved, often the very same texts; no recall, context,
    /// scan or export scoped to one user ever holds another's memory, and equal texts merge
    /// only within a scope.
    #[test]
    fn no_scoped_read_ever_reaches_another_user(
        writes in prop::collection::vec((0usize..4, 0usize..2, 0usize..6, 0usize..3), 1..60),
    ) {
        let dir = crate::common::tempdir();
        let memory = open(dir.path(), &Clock::manual(0));
        let mut expected = std::collections::BTreeSet::new();
        for &(user, agent, word, variant) in &writes {
            let text = format!("the user likes {} number {variant}", WORDS[word]);
            let id = memory
                .remember(NewMemory::new(text.clone()).kind(Kind::Fact).scope(scope(user, agent)))
                .unwrap();
            let item = memory.get(id).unwrap().unwrap();
            assert_eq!(item.scope(), scope(user, agent), "merged across scopes: {text}");
            expected.insert((user, agent, text));
        }
        let all = memory.advanced().scan(&MemoryFilter::new().include_superseded(true), usize::MAX).unwrap();
        let distinct: std::collections::BTreeSet<_> =
            all.iter().map(|m| (m.user.clone(), m.agent.clone(), m.text.clone())).collect();
        assert_eq!(distinct.len(), all.len(), "an exact duplicate was stored twice in a scope");
        for (user, name) in USERS.iter().enumerate() {
            let mine = Some(name.to_string());
            for m in memory.advanced().scan(&user_filter(user), usize::MAX).unwrap() {
                assert_eq!(m.user, mine);
            }
            for word in WORDS {
                let query = Query::new(format!("likes {word}")).k(10).filter(user_filter(user));
                for name in ["single", "rerank", "iterative"] {
                    let strategy = Strategy::parse(name).unwrap();
                    for hit in memory.retrieve(&query, strategy).unwrap() {
                        assert_eq!(hit.item.user, mine, "{name} crossed users");
                    }
                }
                let mut request = ContextRequest::new(format!("likes {word}"), 200);
                request.query = request.query.k(10).filter(user_filter(user));
                for block in memory.context(&request).unwrap().blocks {
                    assert_eq!(memory.get(block.id).unwrap().unwrap().user, mine);
                }
            }
            let export = dir.path().join(format!("export-{user}.mlx"));
            let n = memory.transfer().export(&export, &user_filter(user)).unwrap();
            let other = crate::common::tempdir();
            let copy = open(other.path(), &Clock::manual(0));
            copy.transfer().import(&export).unwrap();
            let imported = copy.advanced().scan(&MemoryFilter::new().include_superseded(true), usize::MAX).unwrap();
            assert_eq!(imported.len(), n);
            assert!(imported.iter().all(|m| m.user == mine));
            let written = expected.iter().filter(|(u, _, _)| *u == user).count();
            let current = memory.advanced().scan(&user_filter(user), usize::MAX).unwrap().len();
            assert!(current <= written);
        }
    }
}

#[test]
fn equal_and_near_equal_texts_of_two_users_stay_apart() {
    let dir = crate::common::tempdir();
    let memory = open_loose(dir.path(), &Clock::manual(0));
    let fact = |text: &str, user: &str| {
        memory
            .remember_explained(
                NewMemory::new(text)
                    .kind(Kind::Fact)
                    .scope(Scope::user(user)),
            )
            .unwrap()
    };
    let a = fact("the staging database listens on port 5432", "ana");
    let b = fact("the staging database listens on port 5432", "bo");
    assert_ne!(a.id, b.id);
    // A near-duplicate fact supersedes only within its own scope.
    let a2 = fact("the staging database listens on port 5433", "ana");
    assert_eq!(a2.action.previous(), Some(a.id));
    assert!(memory.get(b.id).unwrap().unwrap().superseded_by.is_none());
    // A memory with no scope is a scope of its own.
    let none = memory
        .remember(NewMemory::new("the staging database listens on port 5432").kind(Kind::Fact))
        .unwrap();
    assert!(![a.id, b.id].contains(&none));
    let err = memory
        .remember(NewMemory::new("x").scope(Scope::user("")))
        .unwrap_err();
    assert!(
        matches!(&err, memloop::Error::InvalidInput(e) if *e.reason() == memloop::InvalidInput::EmptyScope("user")),
        "{err:?}"
    );
}

/// True if `needle` occurs in any file under `dir`.
fn any_file_holds(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            if bytes.windows(needle.len()).any(|w| w == needle) {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn forget_scope_leaves_nothing_of_the_user_in_any_file() {
    let dir = crate::common::tempdir();
    let store = dir.path().join("store");
    let secret = "zebra-7f3a9c-unique-planted-secret";
    let clock = Clock::manual(0);
    let victim_vector;
    {
        let memory = open_loose(&store, &clock);
        for i in 0..200 {
            memory
                .remember(
                    NewMemory::new(format!("shared note {i} about the weather"))
                        .scope(Scope::user(USERS[i % 3 + 1]))
                        .pinned(true),
                )
                .unwrap();
        }
        let victim = Scope {
            user: Some("ana".into()),
            agent: Some("planner".into()),
            session: Some("s1".into()),
        };
        let first = memory
            .remember(
                NewMemory::new(format!("ana's {secret} is port 5432"))
                    .kind(Kind::Fact)
                    .pinned(true)
                    .scope(victim.clone()),
            )
            .unwrap();
        // A second version: the first stays as history, superseded.
        let second = memory
            .remember_explained(
                NewMemory::new(format!("ana's {secret} is port 5433"))
                    .kind(Kind::Fact)
                    .pinned(true)
                    .scope(victim),
            )
            .unwrap();
        assert_eq!(second.action.previous(), Some(first));
        for i in 0..20 {
            memory
                .remember(
                    NewMemory::new(format!("{secret} chunk {i}"))
                        .scope(Scope::user("ana"))
                        .importance(0.0),
                )
                .unwrap();
        }
        victim_vector = memory
            .admin()
            .embedder()
            .embed_documents(&[format!("ana's {secret} is port 5433").as_str()])
            .unwrap()
            .remove(0);
        // Some of ana's memories decay away first: the forgetting log keeps their start.
        clock.set(400 * 86_400_000).unwrap();
        memory.admin().sweep().unwrap();
        memory.admin().checkpoint().unwrap();
        let planted: Vec<u8> = victim_vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        // In the clear the secret is in the files until erased; sealed, it never was.
        let sealed = cfg!(feature = "test-encryption");
        assert_eq!(
            any_file_holds(&store, secret.as_bytes()).is_empty(),
            sealed,
            "the secret was planted (in the clear)"
        );
        assert_eq!(
            any_file_holds(&store, &planted).is_empty(),
            sealed,
            "the vector is stored as embedded (in the clear)"
        );

        let report = memory.scoped(&Scope::user("ana")).erase().unwrap();
        assert!(report.memories >= 2, "{report:?}");
        assert!(memory
            .advanced()
            .scan(
                &MemoryFilter::new()
                    .scope(Scope::user("ana"))
                    .include_superseded(true),
                usize::MAX
            )
            .unwrap()
            .is_empty());
        assert!(memory
            .recall(&Query::new(secret).k(10))
            .unwrap()
            .iter()
            .all(|h| h.item.user.as_deref() != Some("ana")));
        assert!(
            memory.scoped(&Scope::default()).erase().is_err(),
            "an empty scope is refused"
        );
        memory.close().unwrap();
    }
    assert_eq!(
        any_file_holds(&store, secret.as_bytes()),
        Vec::<String>::new()
    );
    let vector_bytes: Vec<u8> = victim_vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(any_file_holds(&store, &vector_bytes), Vec::<String>::new());
    // The others are intact after the rewrite.
    let memory = open_loose(&store, &clock);
    let left = memory
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap();
    assert!(!left.is_empty() && left.iter().all(|m| m.user.as_deref() != Some("ana")));
}
