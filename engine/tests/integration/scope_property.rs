//! Scopes enforced in the engine on every path that reads: a property test over random
//! callers, strategies, context modes (documents included) and id-only calls finds no result
//! outside the caller's scope.

use memloop::MemoryId;
use std::sync::OnceLock;

use memloop::{
    context::ContextMode, context::ContextRequest, plug::Turn, Clock, Kind, Memory, MemoryFilter,
    MemoryItem, NewMemory, Query, Scope, Strategy as Retrieval,
};
use proptest::prelude::*;

const USERS: [&str; 3] = ["ana", "bob", "cy"];
const AGENTS: [&str; 2] = ["planner", "coder"];
const TOPICS: [&str; 6] = ["report", "savings", "garden", "deploy", "doctor", "travel"];

struct Fixture {
    _dir: tempfile::TempDir,
    memory: Memory,
    items: Vec<MemoryItem>,
}

/// One store shared by every case: each user's facts, chunks sourced to documents under the
/// same keys as other users' documents, documents, and a conversation per user under the same
/// session key.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = crate::common::tempdir();
        let memory = crate::common::open(dir.path(), &Clock::manual(1_700_000_000_000));
        let mut batch = Vec::new();
        for (u, user) in USERS.iter().enumerate() {
            for (a, agent) in AGENTS.iter().enumerate() {
                let scope = Scope {
                    user: Some(user.to_string()),
                    agent: Some(agent.to_string()),
                    session: Some(format!("run{}", (u + a) % 2)),
                };
                for topic in TOPICS {
                    batch.push(
                        NewMemory::new(format!("{user}'s {agent} note about the {topic}"))
                            .kind(Kind::Fact)
                            .scope(scope.clone()),
                    );
                    batch.push(
                        NewMemory::new(format!("{user} wrote a chunk on {topic} for {agent}"))
                            .source(format!("{topic}.md"), None)
                            .scope(scope.clone()),
                    );
                }
            }
            for topic in TOPICS {
                batch.push(
                    NewMemory::new(format!("{user}'s private document on the {topic}"))
                        .kind(Kind::Document)
                        .subject(format!("{topic}.md"))
                        .scope(Scope::user(*user)),
                );
            }
            batch.push(
                NewMemory::new(format!("{user} planted text for session/s1"))
                    .kind(Kind::Document)
                    .subject("session/s1")
                    .scope(Scope::user(*user)),
            );
        }
        batch.push(NewMemory::new(
            "an unscoped note about the garden and the report",
        ));
        memory.remember_batch(batch).unwrap();
        for user in USERS {
            let turns: Vec<Turn> = TOPICS
                .iter()
                .enumerate()
                .map(|(i, t)| Turn {
                    speaker: user.into(),
                    text: format!("{user} talks about the {t}"),
                    time: 1_700_000_000_000 + i as i64,
                })
                .collect();
            memory
                .remember_conversation("s1", &turns, &Scope::user(user))
                .unwrap();
        }
        let items = memory
            .advanced()
            .scan(&MemoryFilter::new().include_superseded(true), usize::MAX)
            .unwrap();
        Fixture {
            _dir: dir,
            memory,
            items,
        }
    })
}

fn caller() -> impl Strategy<Value = Scope> {
    (
        prop::option::of(prop::sample::select(USERS.to_vec())),
        prop::option::of(prop::sample::select(AGENTS.to_vec())),
        prop::option::of(prop::sample::select(vec!["run0", "run1", "s1"])),
    )
        .prop_filter("a caller names at least one scope field", |(u, a, s)| {
            u.is_some() || a.is_some() || s.is_some()
        })
        .prop_map(|(u, a, s)| Scope {
            user: u.map(str::to_string),
            agent: a.map(str::to_string),
            session: s.map(str::to_string),
        })
}

fn within(scope: &Scope, item: &MemoryItem) -> bool {
    [
        (&scope.user, &item.user),
        (&scope.agent, &item.agent),
        (&scope.session, &item.session),
    ]
    .iter()
    .all(|(want, has)| want.is_none() || want == has)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn nothing_outside_the_callers_scope_is_returned(
        scope in caller(),
        topic in prop::sample::select(TOPICS.to_vec()),
        strategy in prop::sample::select(vec![Retrieval::Single, Retrieval::Lexical, Retrieval::RERANK, Retrieval::ITERATIVE]),
        documents in any::<bool>(),
        pick in any::<prop::sample::Index>(),
    ) {
        let f = fixture();
        let m = &f.memory;
        let by_id = |id: u64| f.items.iter().find(|i| i.id == MemoryId::new(id));
        let query = Query::new(format!("notes about the {topic}"))
            .k(8)
            .filter(MemoryFilter::new().scope(scope.clone()));
        for hit in m.retrieve(&query, strategy).unwrap() {
            prop_assert!(within(&scope, &hit.item), "recall {:?} gave {:?}", scope, hit.item);
        }
        let mut request = ContextRequest::new(query.text.clone(), 600);
        request.query = query.clone();
        request.strategy = strategy;
        if documents {
            request.mode = ContextMode::Documents;
        }
        let context = m.context(&request).unwrap();
        for block in &context.blocks {
            let item = by_id(block.id.get());
            prop_assert!(item.is_some_and(|i| within(&scope, i)),
                "context ({documents}) for {:?} served {:?}: {}", scope, item, block.text);
        }
        let others = USERS.iter().filter(|u| scope.user.as_deref().is_some_and(|me| me != **u));
        for other in others {
            prop_assert!(!context.text.contains(&format!("{other}'s ")), "{}", context.text);
            prop_assert!(!context.text.contains(&format!("{other} ")), "{}", context.text);
        }
        // Id-only calls on an arbitrary memory: outside the scope it does not exist.
        let target = pick.get(&f.items);
        let inside = within(&scope, target);
        prop_assert_eq!(m.scoped(&scope).get(target.id).unwrap().is_some(), inside);
        prop_assert_eq!(m.scoped(&scope).explain_decay(target.id).is_ok(), inside);
        if !inside {
            prop_assert!(m.scoped(&scope).feedback(target.id, 3).is_err());
            prop_assert!(m.scoped(&scope).forget(target.id).is_err());
            prop_assert!(m.get(target.id).unwrap().is_some(), "a refused forget deleted it");
        }
    }
}
