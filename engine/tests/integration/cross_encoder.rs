//! The cross-encoder reranker wired through the options: a tiny BERT cross-encoder the test
//! builds (the embedder's own test checkpoint, held there to transformers' logits) reorders
//! the rerank strategy's candidates by its logits, and a directory that holds no cross-encoder
//! is refused at open.

use memloop::MemoryId;
use std::path::{Path, PathBuf};

use memloop::{Clock, Error, Memory, NewMemory, Options, Query, Strategy};
use memloop_embed::{CrossEncoder, CrossEncoderOptions};

use crate::common::hashing;

#[path = "../../../embed/tests/integration/tiny_cross_encoder.rs"]
mod tiny_cross_encoder;

fn embed_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../embed/tests/fixtures")
}

const TEXTS: [&str; 8] = [
    "Hold the reset button on the back of the router for ten seconds.",
    "The router's lights blink amber while it restarts.",
    "My sister moved to Lisbon last spring.",
    "We had cacio e pepe near the Pantheon on our second night in Rome.",
    "The dentist moved my appointment to Thursday at 3pm.",
    "Unplug the router, wait a minute, then plug it back in to reset it.",
    "I bought a new bike helmet on Saturday.",
    "The wifi password is on a sticker under the router.",
];

fn ids_by(m: &Memory, query: &str) -> Vec<MemoryId> {
    m.retrieve(&Query::new(query).k(5), Strategy::RERANK)
        .unwrap()
        .iter()
        .map(|h| h.item.id)
        .collect()
}

#[test]
fn a_cross_encoder_orders_the_rerank_candidates() {
    let tmp = crate::common::tempdir();
    let model = tmp.path().join("ce");
    tiny_cross_encoder::write(&model, &embed_fixtures());
    let query = "how do I reset my router?";

    let clock = Clock::manual(1_000);
    let plain = Memory::open(tmp.path().join("plain"), hashing(64, &clock)).unwrap();
    let reranked = Memory::open(
        tmp.path().join("reranked"),
        Options {
            reranker_model: Some(model.clone()),
            ..hashing(64, &clock)
        },
    )
    .unwrap();
    let mut ids = Vec::new();
    for t in TEXTS {
        let id = reranked.remember(NewMemory::new(t)).unwrap();
        assert_eq!(plain.remember(NewMemory::new(t)).unwrap(), id);
        ids.push(id);
    }

    // Every memory is a candidate (8 is under the default depth of 32), so the model's logits
    // over all of them give the order.
    let ce = CrossEncoder::load(&model, CrossEncoderOptions::default()).unwrap();
    let logits = ce.score(query, &TEXTS).unwrap();
    let mut want: Vec<(f32, MemoryId)> = logits.iter().copied().zip(ids.iter().copied()).collect();
    want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let want: Vec<MemoryId> = want.iter().take(5).map(|w| w.1).collect();

    let hits = reranked
        .retrieve(&Query::new(query).k(5), Strategy::RERANK)
        .unwrap();
    let got: Vec<MemoryId> = hits.iter().map(|h| h.item.id).collect();
    assert_eq!(got, want);
    for h in &hits {
        let logit = logits[ids.iter().position(|&i| i == h.item.id).unwrap()];
        let expected = 2.0 + 1.0 / (1.0 + (-logit).exp());
        assert!(
            (h.score - expected).abs() < 1e-6,
            "{} vs {expected}",
            h.score
        );
        assert_eq!(h.explain.fused, Some(h.score));
    }
    // The default fusion orders the same memories otherwise: the model decided.
    assert_ne!(ids_by(&plain, query), got);
}

#[test]
fn a_directory_without_a_cross_encoder_is_refused_at_open() {
    let tmp = crate::common::tempdir();
    let err = Memory::open(
        tmp.path().join("s"),
        Options {
            reranker_model: Some(embed_fixtures().join("nomic-tiny")),
            ..hashing(64, &Clock::manual(1_000))
        },
    )
    .unwrap_err();
    assert!(matches!(err, Error::Embed(_)), "{err}");
    let err = Memory::open(
        tmp.path().join("t"),
        Options {
            reranker_model: Some(tmp.path().join("absent")),
            ..hashing(64, &Clock::manual(1_000))
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("absent"), "{err}");
    // A reranker of the caller's own and a cross-encoder directory exclude each other.
    let mut both = Options {
        reranker_model: Some(embed_fixtures().join("nomic-tiny")),
        ..hashing(64, &Clock::manual(1_000))
    };
    both.hooks.reranker = std::sync::Arc::new(memloop::retrieve::FusionReranker::default());
    let err = Memory::open(tmp.path().join("u"), both).unwrap_err();
    assert!(
        matches!(err, Error::InvalidInput(_)) && err.to_string().contains("reranker_model"),
        "{err}"
    );
    assert!(
        ["s", "t", "u"].iter().all(|s| !tmp.path().join(s).exists()),
        "a refused open writes nothing"
    );
}
