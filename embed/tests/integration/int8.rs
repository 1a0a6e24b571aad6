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
    let (mean, min, texts, batch) = golden(&e);
    eprintln!(
        "{} texts: mean cosine {mean:.5}, minimum {min:.5}",
        texts.len()
    );
    assert!(mean >= 0.995, "mean cosine {mean}");
    assert!(min >= 0.98, "minimum cosine {min}");
    // One by one equals batched: quantization is per token, so the batch changes nothing.
    for (t, b) in texts.iter().zip(&batch).take(8) {
        let one = e.embed_documents(&[t.as_str()]).unwrap().remove(0);
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

/// The golden texts' vectors from `e`: their cosines to sentence-transformers' (mean,
/// minimum), the texts and the vectors.
fn golden(e: &Embedder) -> (f64, f64, Vec<String>, Vec<Vec<f32>>) {
    let reference = json(fixtures().join("minilm/reference_public.json"));
    let items = reference["items"].as_array().unwrap();
    let texts: Vec<String> = items
        .iter()
        .map(|i| i["text"].as_str().unwrap().to_string())
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let got = e.embed_documents(&refs).unwrap();
    let cos: Vec<f64> = items
        .iter()
        .zip(&got)
        .map(|(item, v)| cosine(v, &floats(&item["embedding"])))
        .collect();
    let mean = cos.iter().sum::<f64>() / cos.len() as f64;
    let min = cos.iter().copied().fold(f64::INFINITY, f64::min);
    (mean, min, texts, got)
}

/// The default model's int8 folder (`memloop model quantize`, what the browser downloads):
/// 39% of the weights' bytes, the golden texts within int8's promise at both precisions, and a
/// model of its own.
#[test]
fn an_int8_model_folder_is_a_third_of_the_bytes_and_keeps_the_vectors() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("all-MiniLM-L6-v2-int8");
    let made = memloop_embed::quantize_model(&default_model_dir(), &dir).unwrap();
    eprintln!("{made:?}");
    // 6 layers × 6 dense products (query, key and value apart) + the pooler; the word table.
    assert_eq!((made.matrices, made.halves), (6 * 6 + 1, 1), "{made:?}");
    assert!(
        made.bytes_after * 100 <= made.bytes_before * 40,
        "{} of {} bytes",
        made.bytes_after,
        made.bytes_before
    );
    for name in ["config.json", "tokenizer.json", "sentence_bert_config.json"] {
        assert!(dir.join(name).is_file(), "{name} copied");
    }
    let load = |precision| {
        Embedder::load(
            &dir,
            EmbedderOptions {
                threads: Some(2),
                precision,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let (mean, min, _, _) = golden(&load(Precision::Int8));
    eprintln!("int8 folder at int8: mean cosine {mean:.5}, minimum {min:.5}");
    assert!(
        mean >= 0.995 && min >= 0.98,
        "int8: mean {mean}, minimum {min}"
    );
    let (mean_f32, min_f32, _, _) = golden(&load(Precision::F32));
    eprintln!("int8 folder at f32: mean cosine {mean_f32:.5}, minimum {min_f32:.5}");
    assert!(
        mean_f32 >= 0.995 && min_f32 >= 0.98,
        "f32: mean {mean_f32}, minimum {min_f32}"
    );
    // The dense layers are the integers the encoder makes of the f32 file, so at int8 the
    // folder costs nothing beside the f32 file at int8. (Not the same vectors: the word table's
    // rounding to 16 bits moves some activations across a rounding step, a realization of
    // int8's noise of its own; the two agree to a mean cosine of 0.995.)
    let (mean_f32_file, ..) = golden(&int8());
    eprintln!("the f32 folder at int8: mean cosine {mean_f32_file:.5}");
    assert!(
        (mean - mean_f32_file).abs() <= 0.0005,
        "{mean} vs {mean_f32_file}"
    );
    let f = load(Precision::Int8).fingerprint().unwrap();
    assert_eq!(f.model, "all-MiniLM-L6-v2-int8+int8");
    assert_ne!(
        f.weights_sha256,
        int8().fingerprint().unwrap().weights_sha256
    );
    // Neither an existing folder nor an int8 model is written over or quantized again.
    let again = memloop_embed::quantize_model(&default_model_dir(), &dir).unwrap_err();
    assert!(again.to_string().contains("exists"), "{again}");
    let twice = scratch.path().join("twice");
    let err = memloop_embed::quantize_model(&dir, &twice).unwrap_err();
    assert!(err.to_string().contains("already an int8 model"), "{err}");
    assert!(!twice.exists());
    // Only what the native encoder runs is quantized.
    let nomic = scratch.path().join("nomic-int8");
    let err = memloop_embed::quantize_model(&fixtures().join("nomic-tiny"), &nomic).unwrap_err();
    assert!(
        matches!(
            err,
            memloop_embed::EmbedError::UnsupportedArchitecture { .. }
        ),
        "{err}"
    );
    assert!(!nomic.exists());
    let leftovers: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
