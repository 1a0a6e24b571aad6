use std::path::Path;

use memloop_embed::{CrossEncoder, CrossEncoderOptions, EmbedError, Precision};

use crate::common::*;
use crate::tiny_cross_encoder;

fn built(dir: &Path) {
    tiny_cross_encoder::write(dir, &fixtures());
}

fn load(dir: &Path, precision: Precision) -> CrossEncoder {
    CrossEncoder::load(
        dir,
        CrossEncoderOptions {
            precision,
            threads: Some(2),
            ..Default::default()
        },
    )
    .unwrap()
}

/// (query, text, transformers' logit) of each reference pair.
fn expected() -> Vec<(String, String, f32)> {
    json(fixtures().join("cross-encoder-tiny/expected.json"))["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["query"].as_str().unwrap().to_string(),
                i["text"].as_str().unwrap().to_string(),
                i["logit"].as_f64().unwrap() as f32,
            )
        })
        .collect()
}

/// Writes the checkpoint where `make_expected.py` reads it (fixtures/cross-encoder-tiny).
#[test]
#[ignore = "writes the reference checkpoint for make_expected.py"]
fn write_tiny_cross_encoder() {
    let dir = std::env::var_os("MEMLOOP_TINY_CROSS_ENCODER").expect("MEMLOOP_TINY_CROSS_ENCODER");
    built(Path::new(&dir));
}

/// Each pair's logit matches Hugging Face's `BertForSequenceClassification` (a padded batch)
/// to 1e-4, whether the texts come one by one or together (sorted and packed by length): the
/// second segment's token types, truncation of the longer text first, the pooler and the
/// classifier.
#[test]
fn tiny_cross_encoder_matches_transformers() {
    let tmp = tempfile::tempdir().unwrap();
    built(tmp.path());
    let ce = load(tmp.path(), Precision::F32);
    assert_eq!(ce.max_len(), 64);
    let pairs = expected();
    let mut together: Vec<f32> = Vec::new();
    let mut want: Vec<f32> = Vec::new();
    let mut queries: Vec<&str> = pairs.iter().map(|p| p.0.as_str()).collect();
    queries.dedup();
    for query in queries {
        let group: Vec<&(String, String, f32)> = pairs.iter().filter(|p| p.0 == query).collect();
        let texts: Vec<&str> = group.iter().map(|p| p.1.as_str()).collect();
        together.extend(ce.score(query, &texts).unwrap());
        want.extend(group.iter().map(|p| p.2));
    }
    for ((query, text, logit), got) in pairs.iter().zip(&together) {
        let alone = ce.score(query, &[text]).unwrap()[0];
        assert!(
            (got - logit).abs() < 1e-4 && (alone - logit).abs() < 1e-4,
            "{query:?} / {text:?}: transformers {logit}, together {got}, alone {alone}"
        );
    }
    // The reference is not flat: a wiring fault could not pass by scoring everything alike.
    let spread = want.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b))
        - want.iter().fold(f32::INFINITY, |a, &b| a.min(b));
    assert!(spread > 0.5, "reference logits span only {spread}");
    assert!(ce.score("anything", &[]).unwrap().is_empty());
}

/// At int8 the same checkpoint orders a query's texts as at f32 where their logits are apart.
#[test]
fn tiny_cross_encoder_in_int8_stays_close_to_f32() {
    let tmp = tempfile::tempdir().unwrap();
    built(tmp.path());
    let (f32s, int8) = (
        load(tmp.path(), Precision::F32),
        load(tmp.path(), Precision::Int8),
    );
    for (query, text, _) in expected() {
        let (a, b) = (
            f32s.score(&query, &[&text]).unwrap()[0],
            int8.score(&query, &[&text]).unwrap()[0],
        );
        assert!(
            (a - b).abs() < 0.1,
            "{query:?} / {text:?}: f32 {a}, int8 {b}"
        );
    }
}

/// Directories that are not a one-label BERT cross-encoder are refused with the reason.
#[test]
fn a_model_that_is_no_cross_encoder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ce");
    built(&dir);
    let opts = CrossEncoderOptions::default;

    // An embedding model: not BERT here, and MiniLM-style checkpoints have no classifier.
    let err = CrossEncoder::load(fixtures().join("nomic-tiny"), opts()).unwrap_err();
    assert!(
        matches!(err, EmbedError::UnsupportedArchitecture { .. }),
        "{err}"
    );

    let config = dir.join("config.json");
    let original = std::fs::read_to_string(&config).unwrap();
    let three = original.replace(
        r#""id2label": {
    "0": "LABEL_0"
  }"#,
        r#""id2label": {"0": "a", "1": "b", "2": "c"}"#,
    );
    assert_ne!(three, original);
    std::fs::write(&config, three).unwrap();
    let err = CrossEncoder::load(&dir, opts()).unwrap_err();
    assert!(
        matches!(err, EmbedError::MalformedFile { .. }) && err.to_string().contains("3 labels"),
        "{err}"
    );
    std::fs::write(&config, &original).unwrap();

    for (name, value) in [("max_len", Some(2)), ("max_len", Some(65))] {
        let err = CrossEncoder::load(
            &dir,
            CrossEncoderOptions {
                max_len: value,
                ..opts()
            },
        )
        .unwrap_err();
        assert!(
            matches!(err, EmbedError::InvalidOption { name: n, .. } if n == name),
            "{err}"
        );
    }
    let err = CrossEncoder::load(
        &dir,
        CrossEncoderOptions {
            batch_size: 0,
            ..opts()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            EmbedError::InvalidOption {
                name: "batch_size",
                ..
            }
        ),
        "{err}"
    );

    // Weights without the classification head (an embedding model's file).
    let weights = dir.join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let kept: Vec<(String, safetensors::tensor::TensorView<'_>)> = file
        .tensors()
        .into_iter()
        .filter(|(name, _)| !name.starts_with("classifier"))
        .collect();
    let headless = tmp.path().join("headless.safetensors");
    safetensors::serialize_to_file(kept, None, &headless).unwrap();
    std::fs::rename(&headless, &weights).unwrap();
    let err = CrossEncoder::load(&dir, opts()).unwrap_err();
    assert!(
        matches!(err, EmbedError::WeightsMismatch { .. }) && err.to_string().contains("classifier"),
        "{err}"
    );

    let err = CrossEncoder::load(tmp.path().join("absent"), opts()).unwrap_err();
    assert!(
        matches!(&err, EmbedError::MissingCrossEncoderFile { path, .. } if path.ends_with("config.json"))
            && err.to_string().contains("directory you supply")
            && !err.to_string().contains("model fetch"),
        "{err}"
    );
}
