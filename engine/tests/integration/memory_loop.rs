//! The memory loop: strategies and explanations, context assembly, feedback, tasks, subjects,
//! documents.

use memloop::MemoryId;
use std::sync::Arc;

use memloop::context::{assemble, Candidate, Precision, KEY_REFERENCE};
use memloop::retrieve::{QueryRefiner, RefineInput, Refinement, Reranker};
use memloop::{
    context::ContextMode, context::ContextRequest, context::Structures, items::Outcome,
    requests::SubjectEvent, Clock, Error, Hit, Kind, Memory, NewMemory, Query, Strategy, Task,
    Tier,
};
use proptest::prelude::{any, prop, proptest, ProptestConfig};
use proptest::strategy::Strategy as _;

use crate::common::{hashing, open, sentences};

#[test]
fn rerank_fuses_lexical_and_vector_rankings_and_explains_them() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let mut texts = sentences(300);
    texts.push("zebrafish xylophone quokka".into());
    let ids = m
        .remember_batch(texts.iter().map(NewMemory::new).collect())
        .unwrap();
    let rare = *ids.last().unwrap();
    let hits = m
        .retrieve(&Query::new("quokka").k(5), Strategy::RERANK)
        .unwrap();
    assert_eq!(
        hits[0].item.id, rare,
        "the only memory with the rare term wins"
    );
    let e = &hits[0].explain;
    assert_eq!(e.lexical_rank, Some(0));
    assert!(e.lexical.unwrap() > 0.0 && e.vector.is_some() && e.fused.is_some());
    assert_eq!(e.tier, Tier::Working);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(hits.iter().enumerate().all(|(i, h)| h.rank == i));
    // Single-step hits explain their vector score and rank only.
    let single = m
        .retrieve(&Query::new("quokka").k(3), Strategy::Single)
        .unwrap();
    assert_eq!(single[0].explain.vector_rank, Some(0));
    assert_eq!(single[0].explain.lexical, None);
    // The lexical index follows writes and forgetting.
    m.forget(rare).unwrap();
    let hits = m
        .retrieve(&Query::new("quokka").k(5), Strategy::RERANK)
        .unwrap();
    assert!(hits.iter().all(|h| h.item.id != rare));
    let again = m
        .remember(NewMemory::new("a quokka smiles").kind(Kind::Fact))
        .unwrap();
    let hits = m
        .retrieve(
            &Query::new("quokka").k(1).kind(Kind::Fact),
            Strategy::RERANK,
        )
        .unwrap();
    assert_eq!(hits[0].item.id, again);
}

struct Reversed;
impl Reranker for Reversed {
    fn rerank(&self, _: &str, c: &[Hit]) -> memloop::Result<Vec<f32>> {
        Ok(c.iter().map(|h| -h.explain.vector.unwrap_or(0.0)).collect())
    }
}
struct WrongLength;
impl Reranker for WrongLength {
    fn rerank(&self, _: &str, _: &[Hit]) -> memloop::Result<Vec<f32>> {
        Ok(vec![1.0])
    }
}
struct Rewrite(Arc<std::sync::Mutex<Vec<usize>>>);
impl QueryRefiner for Rewrite {
    fn refine(&self, input: &RefineInput<'_>) -> memloop::Result<Refinement> {
        self.0.lock().unwrap().push(input.hits.len());
        assert_eq!(input.hits.len(), input.hit_vectors.len());
        Ok(Refinement::Text("lantern meadow".into()))
    }
}

#[test]
fn callers_rerankers_and_refiners_are_used_and_checked() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let rounds = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut options = hashing(256, &clock);
    options.hooks.reranker = Arc::new(Reversed);
    options.hooks.refiner = Arc::new(Rewrite(rounds.clone()));
    let m = Memory::open(dir.path(), options).unwrap();
    m.remember_batch(sentences(200).iter().map(NewMemory::new).collect())
        .unwrap();
    let q = Query::new(sentences(5)[4].as_str()).k(5);
    let hits = m.retrieve(&q, Strategy::RERANK).unwrap();
    assert!(hits
        .windows(2)
        .all(|w| w[0].explain.vector <= w[1].explain.vector));
    let hits = m
        .retrieve(
            &q,
            Strategy::Iterative {
                rounds: 3,
                per_round: 4,
            },
        )
        .unwrap();
    assert_eq!(*rounds.lock().unwrap(), [4, 4, 4]);
    assert_eq!(hits.len(), 5);
    drop(m);
    let mut options = hashing(256, &clock);
    options.hooks.reranker = Arc::new(WrongLength);
    let m = Memory::open(dir.path(), options).unwrap();
    let err = m.retrieve(&q, Strategy::RERANK).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidInput(memloop::InvalidInput::RerankerScores { returned: 1, .. })
        ),
        "{err}"
    );
}

#[test]
fn iterative_rocchio_retrieval_returns_k_distinct_current_memories() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    m.remember_batch(sentences(400).iter().map(NewMemory::new).collect())
        .unwrap();
    let hits = m
        .retrieve(
            &Query::new(sentences(8)[7].as_str()).k(10),
            Strategy::ITERATIVE,
        )
        .unwrap();
    assert_eq!(hits.len(), 10);
    let mut ids: Vec<MemoryId> = hits.iter().map(|h| h.item.id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 10);
    assert_eq!(hits[0].item.text, sentences(8)[7]);
}

#[test]
fn feedback_moves_decay_and_precision_durably() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let good = m
        .remember(NewMemory::new("the deploy key lives in vault").importance(0.5))
        .unwrap();
    let bad = m
        .remember(NewMemory::new("lunch was pasta on tuesday").importance(0.5))
        .unwrap();
    let good_t2 = m.admin().explain_decay(good).unwrap().forget_at.unwrap();
    let bad_t2 = m.admin().explain_decay(bad).unwrap().forget_at.unwrap();
    clock.advance(3_600_000).unwrap();
    assert!(matches!(m.feedback(good, 0), Err(Error::InvalidInput(_))));
    assert!(
        matches!(m.feedback(MemoryId::new(999), 3), Err(Error::NotFound(id)) if id == MemoryId::new(999))
    );
    let s = m.feedback(good, 5).unwrap();
    assert_eq!((s.count, s.last, s.precision_shift), (1, 5, 0));
    let s = m.feedback(good, 3).unwrap();
    assert_eq!((s.count, s.sum, s.precision_shift), (2, 8, 1));
    m.feedback(bad, 1).unwrap();
    assert!(m.get(good).unwrap().unwrap().importance > 0.5);
    assert!(m.get(bad).unwrap().unwrap().importance < 0.5);
    assert!(m.admin().explain_decay(good).unwrap().forget_at.unwrap() > good_t2);
    assert!(m.admin().explain_decay(bad).unwrap().forget_at.unwrap() < bad_t2);
    drop(m);
    let m = open(dir.path(), &clock);
    let hits = m.recall(&Query::new("deploy key").k(1)).unwrap();
    let fb = hits[0].explain.feedback.unwrap();
    assert_eq!((fb.count, fb.sum, fb.precision_shift), (2, 8, 1));
    // The shift is applied to the served precision: a general reference served at concise.
    let ctx = m
        .advanced()
        .context_of(
            &m.recall(&Query::new("deploy key").k(2)).unwrap(),
            1000,
            0.5,
            ContextMode::Memories,
        )
        .unwrap();
    let block = ctx.blocks.iter().find(|b| b.id == good).unwrap();
    assert_eq!(block.precision, Precision::Original);
    let hits = m.recall(&Query::new("lunch pasta").k(2)).unwrap();
    assert_eq!(hits[0].item.id, bad);
    let ctx = m
        .advanced()
        .context_of(&hits, 1000, 0.5, ContextMode::Memories)
        .unwrap();
    // The harmful memory ranks first, but is served one step below original.
    assert_eq!(ctx.blocks[0].precision, Precision::Concise);
    let good_block = ctx.blocks.iter().find(|b| b.id == good).unwrap();
    assert_eq!(
        good_block.precision,
        Precision::Concise,
        "brief shifted up by one"
    );
}

#[test]
fn tasks_keep_both_outcomes_with_three_precisions_and_reflections() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let failed = m
        .record_task(
            &Task::new("deploy the api to staging", Outcome::Failure)
                .step("build the docker image")
                .step("push it to the registry")
                .step("apply the helm chart without migrations"),
        )
        .unwrap();
    let ok = m
        .record_task(
            &Task::new("deploy the api to staging", Outcome::Success)
                .step("build the docker image")
                .step("run the migrations")
                .step("apply the helm chart")
                .reflection("unused on success"),
        )
        .unwrap();
    assert!(ok.reflection.is_none());
    let task = m.get(failed.task).unwrap().unwrap();
    assert_eq!(task.kind, Kind::Task);
    assert_eq!(task.outcome, Some(Outcome::Failure));
    assert!(task
        .text
        .contains("3. apply the helm chart without migrations"));
    assert!(task.text.ends_with("Outcome: failure"));
    assert_eq!(
        task.concise.as_deref(),
        Some("Task: deploy the api to staging\nFinal actions: push it to the registry; apply the helm chart without migrations\nOutcome: failure")
    );
    assert_eq!(
        task.brief.as_deref(),
        Some("Task: deploy the api to staging — build, push, apply (failure)")
    );
    let reflection = m.get(failed.reflection.unwrap()).unwrap().unwrap();
    assert_eq!(reflection.kind, Kind::Reflection);
    assert_eq!(
        reflection.sources[0].document,
        format!("task/{}", failed.task)
    );
    assert!(reflection.text.contains("failed"));
    assert_ne!(failed.task, ok.task, "both outcomes are kept");
    let ctx = m
        .context(&ContextRequest {
            query: Query::new("how to deploy the api").k(3).kind(Kind::Task),
            ..ContextRequest::new("", 400)
        })
        .unwrap();
    assert_eq!(ctx.blocks.len(), 2);
    assert!(ctx.text.contains("Outcome: failure") || ctx.text.contains("(failure)"));
    assert!(ctx.text.contains("success"));
    assert!(matches!(
        m.record_task(&Task::new("  ", Outcome::Success)),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn a_subject_is_one_memory_whose_summary_follows_its_events() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_795_341_600_000); // 2026-11-22T10:00:00Z
    let m = open(dir.path(), &clock);
    let id = m
        .observe("src/main.rs", SubjectEvent::Created, Some("prints hello"))
        .unwrap();
    clock.advance(60_000).unwrap();
    assert_eq!(
        m.observe(
            "src/main.rs",
            SubjectEvent::Modified,
            Some("parses arguments with clap")
        )
        .unwrap(),
        id
    );
    assert_eq!(
        m.observe("src/main.rs", SubjectEvent::Executed, Some("exit code 0"))
            .unwrap(),
        id
    );
    let item = m.get(id).unwrap().unwrap();
    assert_eq!(item.kind, Kind::Subject);
    assert_eq!(item.count, 3);
    assert_eq!(
        item.text,
        "src/main.rs (created 2026-11-22T10:00:00Z, modified 2026-11-22T10:01:00Z): parses arguments with clap Executed 1 time, last at 2026-11-22T10:01:00Z: exit code 0"
    );
    assert!(!item.text.contains("hello"), "stale content replaced");
    // Re-embedded in place: the new content is found, the stale is not.
    let hits = m
        .recall(&Query::new("parses arguments with clap").k(1))
        .unwrap();
    assert_eq!(hits[0].item.id, id);
    let other = m
        .observe(
            "src/lib.rs",
            SubjectEvent::Created,
            Some("parses arguments with clap"),
        )
        .unwrap();
    assert_ne!(other, id, "another subject is another memory, never merged");
    clock.advance(60_000).unwrap();
    m.observe("src/main.rs", SubjectEvent::Deleted, None)
        .unwrap();
    drop(m);
    let m = open(dir.path(), &clock);
    let item = m.get(id).unwrap().unwrap();
    assert_eq!(item.text, "src/main.rs: deleted at 2026-11-22T10:02:00Z.");
    assert_eq!(item.count, 4);
    assert_eq!(m.stats().unwrap().memories, 2);
    assert!(matches!(
        m.observe(" ", SubjectEvent::Created, None),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn documents_are_chunked_linked_and_served_once_in_memory_doc_mode() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let text = sentences(60).join(". ");
    let structures = Structures {
        triples: vec![("falcon".into(), "guards".into(), "harbor".into())],
        facts: vec!["station 7 is closed on sundays".into()],
        summaries: vec!["a catalogue of stations and what happens near them".into()],
    };
    let doc = m
        .advanced()
        .remember_document("stations.txt", &text, &structures)
        .unwrap();
    assert!(doc.chunks.len() >= 3, "{} chunks", doc.chunks.len());
    assert_eq!(doc.structures.len(), 3);
    let mut covered_to = 0;
    for &c in &doc.chunks {
        let chunk = m.get(c).unwrap().unwrap();
        let (a, b) = chunk.sources[0].span.unwrap();
        assert_eq!(chunk.sources[0].document, "stations.txt");
        assert_eq!(&text[a as usize..b as usize], chunk.text);
        assert!(
            a as usize <= covered_to,
            "chunks overlap or touch: {a} > {covered_to} ({})",
            doc.chunks.len()
        );
        covered_to = b as usize;
        assert!(m.admin().embedder().count_tokens(&chunk.text) <= memloop::context::CHUNK_TOKENS);
    }
    assert_eq!(covered_to, text.len());
    let fact = m.get(doc.structures[1]).unwrap().unwrap();
    assert_eq!(fact.sources[0].document, "stations.txt");
    let hits = m
        .recall(&Query::new(sentences(30)[29].as_str()).k(5))
        .unwrap();
    let docs = m.advanced().documents(&hits).unwrap();
    assert_eq!(docs.len(), 1, "every hit points to the same document");
    assert_eq!(docs[0].id, Some(doc.document));
    assert_eq!(docs[0].text, text);
    let ctx = m
        .context(&ContextRequest {
            mode: ContextMode::Documents,
            ..ContextRequest::new(sentences(30)[29].as_str(), 10_000)
        })
        .unwrap();
    assert_eq!(ctx.blocks.len(), 1);
    assert_eq!(ctx.blocks[0].id, doc.document);
}

fn words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Random candidates: ids 1.., precisions nested (brief ⊂ concise ⊂ original), random starts.
fn candidates() -> impl proptest::strategy::Strategy<Value = Vec<Candidate>> {
    prop::collection::vec((1usize..60, 0u8..3, any::<bool>()), 0..12).prop_map(|v| {
        let n_key = v.len() / 3 + 1;
        v.into_iter()
            .enumerate()
            .map(|(i, (len, start, _))| {
                let text: Vec<String> = (0..len).map(|w| format!("w{i}x{w}")).collect();
                Candidate {
                    id: MemoryId::new(i as u64 + 1),
                    score: 1.0 - i as f32 / 100.0,
                    key: i < n_key,
                    start: [Precision::Brief, Precision::Concise, Precision::Original]
                        [start as usize],
                    texts: [
                        text[..len.div_ceil(4)].join(" "),
                        text[..len.div_ceil(2)].join(" "),
                        text.join(" "),
                    ],
                }
            })
            .collect()
    })
}

/// Checks an assembled context against the contract with counter `count`.
fn check(cands: &[Candidate], budget: usize, count: &dyn Fn(&str) -> usize) {
    let ctx = assemble(cands, budget, count);
    assert!(ctx.tokens <= budget, "{} > {budget}", ctx.tokens);
    assert_eq!(ctx.tokens, count(&ctx.text));
    // Relevance order within each label, key references first.
    let order: Vec<(bool, MemoryId)> = ctx
        .blocks
        .iter()
        .map(|b| (b.label != KEY_REFERENCE, b.id))
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
    // Highest precisions that fit: no block can go one step up, no dropped memory can come
    // back at brief, without exceeding the budget.
    let levels: Vec<Option<Precision>> = cands
        .iter()
        .map(|c| {
            ctx.blocks
                .iter()
                .find(|b| b.id == c.id)
                .map(|b| b.precision)
        })
        .collect();
    for (i, c) in cands.iter().enumerate() {
        let up = match levels[i] {
            Some(p) if p < c.start => Some(if p == Precision::Brief {
                Precision::Concise
            } else {
                Precision::Original
            }),
            Some(_) => None,
            None => Some(Precision::Brief),
        };
        if let Some(up) = up {
            let mut trial: Vec<Candidate> = Vec::new();
            for (j, d) in cands.iter().enumerate() {
                let level = if j == i { Some(up) } else { levels[j] };
                if let Some(p) = level {
                    trial.push(Candidate {
                        start: p,
                        ..d.clone()
                    });
                }
            }
            let unconstrained = assemble(&trial, usize::MAX, count);
            assert!(
                unconstrained.tokens > budget,
                "memory {} could be served at {up:?}",
                c.id
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn context_never_exceeds_the_budget_and_uses_the_highest_precisions_that_fit(
        cands in candidates(), budget in 0usize..400
    ) {
        check(&cands, budget, &words);
    }
}

#[test]
fn context_fits_the_real_tokenizer_budget() {
    let model = memloop::model::load_model(None).expect("default model is fetched");
    let count = |s: &str| model.count_tokens(s);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(48));
    runner
        .run(&(candidates(), 0usize..600), |(cands, budget)| {
            check(&cands, budget, &count);
            Ok(())
        })
        .unwrap();
}

#[test]
fn long_term_memories_are_served_one_precision_lower() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let id = m
        .remember(NewMemory::new(
            "the backup runs at midnight. it takes an hour.",
        ))
        .unwrap();
    let hits = m.recall(&Query::new("backup").k(1)).unwrap();
    let ctx = m
        .advanced()
        .context_of(&hits, 1000, 1.0, ContextMode::Memories)
        .unwrap();
    assert_eq!(ctx.blocks[0].precision, Precision::Original);
    let demote_at = m.admin().explain_decay(id).unwrap().demote_at.unwrap();
    clock.set(demote_at + 1).unwrap();
    m.admin().sweep().unwrap();
    let hits = m.recall(&Query::new("backup").k(1)).unwrap();
    assert_eq!(
        hits[0].explain.tier,
        Tier::LongTerm,
        "found in the long-term tier"
    );
    assert_eq!(
        hits[0].item.tier,
        Tier::Working,
        "and reinforced by the recall"
    );
    let ctx = m
        .advanced()
        .context_of(&hits, 1000, 1.0, ContextMode::Memories)
        .unwrap();
    assert_eq!(ctx.blocks[0].precision, Precision::Concise);
}
