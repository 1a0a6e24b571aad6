use memloop_embed::{EmbedError, Embedder, EmbedderOptions};

use crate::common::*;

fn tiny(dimension: Option<usize>) -> Embedder {
    Embedder::load(
        fixtures().join("nomic-tiny"),
        EmbedderOptions {
            dimension,
            threads: Some(2),
            device: test_device(),
            ..Default::default()
        },
    )
    .unwrap()
}

fn items() -> Vec<serde_json::Value> {
    json(fixtures().join("nomic-tiny/expected.json"))["items"]
        .as_array()
        .unwrap()
        .clone()
}

fn embed(e: &Embedder, item: &serde_json::Value) -> Vec<f32> {
    let text = item["text"].as_str().unwrap();
    match item["task"].as_str().unwrap() {
        "search_query" => e.embed_query(text).unwrap(),
        _ => e.embed_documents(&[text]).unwrap().remove(0),
    }
}

/// Pooled vectors match nomic's own PyTorch code; task prefixes are applied automatically.
#[test]
fn tiny_nomic_bert_matches_nomic_reference() {
    let e = tiny(None);
    assert_eq!(e.dim(), 64);
    for item in items() {
        let got = embed(&e, &item);
        let want = floats(&item["embedding"]);
        let c = cosine(&got, &want);
        let max = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            c >= 0.9999 && max < 1e-4,
            "{:?}: cosine {c}, max diff {max}",
            item["text"]
        );
    }
}

#[test]
fn tiny_nomic_bert_batches_equal_singles() {
    let e = tiny(None);
    let docs: Vec<serde_json::Value> = items()
        .into_iter()
        .filter(|i| i["task"] == "search_document")
        .collect();
    let texts: Vec<&str> = docs.iter().map(|i| i["text"].as_str().unwrap()).collect();
    let batch = e.embed_documents(&texts).unwrap();
    for (item, got) in docs.iter().zip(&batch) {
        assert!(cosine(got, &floats(&item["embedding"])) >= 0.9999);
    }
}

#[test]
fn tiny_nomic_bert_hidden_states_match() {
    let e = tiny(None);
    for item in items()
        .iter()
        .filter(|i| i.get("last_hidden_state").is_some_and(|h| !h.is_null()))
    {
        let got = e.token_embeddings(item["input"].as_str().unwrap()).unwrap();
        let want = item["last_hidden_state"].as_array().unwrap();
        assert_eq!(got.len(), want.len());
        let mut max = 0f32;
        for (g, w) in got.iter().zip(want) {
            for (a, b) in g.iter().zip(floats(w)) {
                max = max.max((a - b).abs());
            }
        }
        assert!(max < 1e-4, "last hidden state differs by {max}");
        assert_eq!(item["hidden_states"]["layer_1"], item["last_hidden_state"]);
    }
}

/// Matryoshka dimensions: layer norm, truncate, renormalise, as nomic specifies.
#[test]
fn matryoshka_dimensions_match_reference() {
    for d in [64usize, 32, 16] {
        let e = tiny(Some(d));
        assert_eq!(e.dim(), d);
        for item in items() {
            let got = embed(&e, &item);
            let want = floats(&item["matryoshka"][d.to_string()]);
            assert!(cosine(&got, &want) >= 0.9999, "d={d} {:?}", item["text"]);
        }
    }
    let bad = Embedder::load(
        fixtures().join("nomic-tiny"),
        EmbedderOptions {
            dimension: Some(65),
            ..Default::default()
        },
    );
    assert!(matches!(
        bad,
        Err(EmbedError::InvalidOption {
            name: "dimension",
            ..
        })
    ));
}
