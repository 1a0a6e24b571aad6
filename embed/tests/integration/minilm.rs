use memloop_embed::{Embedder, EmbedderOptions, Kernels};

use crate::common::*;

/// Every public reference text — truncated long texts, unicode, emoji, CJK, empty and
/// whitespace-only inputs included — embeds to cosine ≥ 0.9999 with sentence-transformers.
#[test]
fn every_reference_text_matches_sentence_transformers() {
    let e = minilm();
    assert_eq!(e.dim(), 384);
    assert_eq!(e.max_len(), 256);
    let reference = json(fixtures().join("minilm/reference_public.json"));
    let items = reference["items"].as_array().unwrap();
    let texts: Vec<&str> = items.iter().map(|i| i["text"].as_str().unwrap()).collect();
    let batch = e.embed_documents(&texts).unwrap();
    let mut worst = 1.0f64;
    for (item, got) in items.iter().zip(&batch) {
        let want = floats(&item["embedding"]);
        let c = cosine(got, &want);
        worst = worst.min(c);
        assert!(c >= 0.9999, "{:?}: cosine {c}", item["text"]);
        let norm: f32 = got.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
    eprintln!("{} texts, worst cosine {worst:.7}", items.len());
    assert!(
        items.iter().any(|i| i["truncated"].as_bool() == Some(true)),
        "the set includes truncated texts"
    );
}

/// Batch results equal one-by-one results (length sorting and padding change nothing).
#[test]
fn batches_equal_single_inputs() {
    let e = minilm();
    let reference = json(fixtures().join("minilm/reference_public.json"));
    let texts = reference_texts(&reference);
    let batch = e.embed_documents(&texts).unwrap();
    for (t, b) in texts.iter().zip(&batch).step_by(3) {
        let single = e.embed_documents(&[t]).unwrap();
        let max = single[0]
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        assert!(max < 1e-5, "{t:?}: batch vs single differ by {max}");
    }
    // Queries use the same path for BERT models (no prefixes).
    assert_eq!(
        e.embed_query(texts[0]).unwrap(),
        e.embed_documents(&[texts[0]]).unwrap()[0]
    );
}

#[test]
fn empty_and_whitespace_inputs_are_defined() {
    let e = minilm();
    let v = e.embed_documents(&["", " ", "\n\t  \n"]).unwrap();
    assert_eq!(v.len(), 3);
    assert!(v
        .iter()
        .all(|x| x.len() == 384 && x.iter().all(|f| f.is_finite())));
    assert!(cosine(&v[0], &v[1]) > 0.99999 && cosine(&v[0], &v[2]) > 0.99999);
    assert!(e.embed_documents(&[]).unwrap().is_empty());
}

#[test]
fn semantics_and_token_counts() {
    let e = minilm();
    let q = e.embed_query("What is the capital of Australia?").unwrap();
    let d = e
        .embed_documents(&[
            "Canberra is the capital city of Australia.",
            "The quick brown fox jumps over the lazy dog.",
        ])
        .unwrap();
    assert!((cosine(&q, &d[0]) - 0.763).abs() < 0.01);
    assert!(cosine(&q, &d[1]) < 0.1);
    assert_eq!(e.count_tokens("Café naïve"), 2); // accents stripped: "cafe", "naive"
    assert_eq!(e.count_tokens(""), 0);
    let long = "word ".repeat(400);
    assert_eq!(e.count_tokens(&long), 400, "the counter does not truncate");
}

#[test]
fn fingerprint_names_the_weights() {
    let e = minilm();
    let f = e.fingerprint().unwrap();
    assert_eq!(
        f.weights_sha256,
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
    );
    assert_eq!(f.dim, 384);
    assert_eq!(f, e.fingerprint().unwrap());
}

/// memloop's native CPU encoder (the default) and candle-transformers' `bert` (the reference;
/// on [`test_device`], so on a GPU this compares the CPU with CUDA) compute the same function:
/// the same hidden states token by token and the same vectors, also for a truncated text and a
/// batch mixing lengths.
#[test]
fn native_and_candle_kernels_agree() {
    let dir = minilm().dir().to_path_buf();
    let candle = Embedder::load(
        &dir,
        EmbedderOptions {
            threads: Some(2),
            kernels: Kernels::Candle,
            device: test_device(),
            ..Default::default()
        },
    )
    .unwrap();
    let native = Embedder::load(
        &dir,
        EmbedderOptions {
            threads: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    let reference = json(fixtures().join("minilm/reference_public.json"));
    let texts: Vec<&str> = reference_texts(&reference).into_iter().step_by(4).collect();
    let (a, b) = (
        native.embed_documents(&texts).unwrap(),
        candle.embed_documents(&texts).unwrap(),
    );
    for ((t, a), b) in texts.iter().zip(&a).zip(&b) {
        assert!(cosine(a, b) > 0.99999, "{t:?}: cosine {}", cosine(a, b));
    }
    for t in [
        "Canberra is the capital city of Australia.",
        &"memory ".repeat(300),
    ] {
        let (a, b) = (
            native.token_embeddings(t).unwrap(),
            candle.token_embeddings(t).unwrap(),
        );
        assert_eq!(a.len(), b.len());
        let max = a
            .iter()
            .flatten()
            .zip(b.iter().flatten())
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        assert!(max < 1e-4, "hidden states differ by {max}");
    }
}
