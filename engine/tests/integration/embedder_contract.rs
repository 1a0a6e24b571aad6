//! One contract suite for the `TextEmbedder` trait, run against both implementations: the
//! model-free hashing embedder and the default model (all-MiniLM-L6-v2, fetched by the test
//! command), as tantivy runs one suite per trait against each of its implementations.

use memloop::{HashingEmbedder, TextEmbedder};

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// What every embedder must do for the engine to trust its output.
fn contract(e: &dyn TextEmbedder) {
    let name = e.fingerprint();
    assert!(!name.is_empty(), "a fingerprint names the model");
    assert_eq!(name, e.fingerprint(), "{name}: the fingerprint is stable");
    let dim = e.dim();
    assert!(dim > 0);
    let texts = [
        "The staging database password rotates every Monday.",
        "a",
        "Ünïcode, emoji 🚀 and punctuation!?",
        &"a long text of many words ".repeat(200),
    ];
    let batch = e.embed_documents(&texts).unwrap();
    assert_eq!(
        batch.len(),
        texts.len(),
        "{name}: one vector per text, in order"
    );
    for (t, v) in texts.iter().zip(&batch) {
        assert_eq!(v.len(), dim, "{name}: every vector has the dimension");
        assert!(v.iter().all(|x| x.is_finite()), "{name}: finite");
        assert!(
            (norm(v) - 1.0).abs() < 1e-3,
            "{name}: unit length for {t:?}"
        );
        // Alone or in a batch, the same text gives the same vector.
        let alone = &e.embed_documents(&[t]).unwrap()[0];
        let cos: f32 = alone.iter().zip(v).map(|(a, b)| a * b).sum();
        assert!(cos > 0.9999, "{name}: batching changed {t:?} (cos {cos})");
    }
    assert!(
        e.embed_documents(&[]).unwrap().is_empty(),
        "{name}: no texts, no vectors"
    );
    let q = e.embed_query("when does the password change?").unwrap();
    assert_eq!(q.len(), dim);
    assert!((norm(&q) - 1.0).abs() < 1e-3);
    // Deterministic, and a related document is closer than an unrelated one.
    assert_eq!(q, e.embed_query("when does the password change?").unwrap());
    let related: f32 = q.iter().zip(&batch[0]).map(|(a, b)| a * b).sum();
    let other: f32 = q.iter().zip(&batch[2]).map(|(a, b)| a * b).sum();
    assert!(related > other, "{name}: {related} vs {other}");
    let (short, long) = (e.count_tokens("two words"), e.count_tokens(texts[3]));
    assert!(
        short >= 1 && long > short,
        "{name}: token counts grow with the text"
    );
}

#[test]
fn the_hashing_embedder_keeps_the_contract() {
    contract(&HashingEmbedder::new(256));
}

#[test]
fn the_default_model_keeps_the_contract() {
    let model = memloop::model::load_model(None)
        .expect("the default model (scripts/fetch-model.sh, run by the test command, fetches it)");
    contract(&model);
}
