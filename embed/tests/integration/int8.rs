//! The int8 encoder (`Precision::Int8`) against sentence-transformers' f32 vectors: held to
//! the fidelity the issue set (mean cosine ≥ 0.995, minimum ≥ 0.98 over every public reference
//! text: truncated, unicode, CJK, empty), batch-independent, and named apart in the
//! fingerprint so a store never mixes its vectors with f32 ones.

use memloop_embed::{default_model_dir, Embedder, EmbedderOptions, Kernels, Precision};

use crate::common::*;

fn int8() -> Embedder {
    Embedder::load(
        default_model_dir(),
        EmbedderOptions {
            threads: Some(2),
            precision: Precision::Int8,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn int8_vectors_stay_close_to_sentence_transformers() {
    let e = int8();
    let reference = json(fixtures().join("minilm/reference_public.json"));
    let items = reference["items"].as_array().unwrap();
    let texts: Vec<&str> = items.iter().map(|i| i["text"].as_str().unwrap()).collect();
    let batch = e.embed_documents(&texts).unwrap();
    let cos: Vec<f64> = items
        .iter()
        .zip(&batch)
        .map(|(item, got)| cosine(got, &floats(&item["embedding"])))
        .collect();
    let mean = cos.iter().sum::<f64>() / cos.len() as f64;
    let min = cos.iter().copied().fold(f64::INFINITY, f64::min);
    eprintln!(
        "{} texts: mean cosine {mean:.5}, minimum {min:.5}",
        cos.len()
    );
    assert!(mean >= 0.995, "mean cosine {mean}");
    assert!(min >= 0.98, "minimum cosine {min}");
    // One by one equals batched: quantization is per token, so the batch changes nothing.
    for (t, b) in texts.iter().zip(&batch).take(8) {
        let one = e.embed_documents(&[t]).unwrap().remove(0);
        assert!(cosine(&one, b) > 0.99999, "{t:?}");
    }
}

#[test]
fn int8_is_its_own_embedding_space_and_needs_the_native_encoder() {
    let f = int8().fingerprint().unwrap();
    assert_eq!(f.model, "all-MiniLM-L6-v2+int8");
    assert_ne!(f, minilm().fingerprint().unwrap());
    let err = Embedder::load(
        default_model_dir(),
        EmbedderOptions {
            precision: Precision::Int8,
            kernels: Kernels::Candle,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("int8 needs memloop's native encoder"),
        "{err}"
    );
}
