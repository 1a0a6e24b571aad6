use std::path::PathBuf;

use memloop_embed::{default_model_dir, DeviceChoice, Embedder, EmbedderOptions};

/// The reference fixtures: `MEMLOOP_EMBED_FIXTURES` when the test binary runs away from its
/// source tree (scripts/gpu-run.sh on a GPU machine), else `tests/fixtures`.
pub fn fixtures() -> PathBuf {
    std::env::var_os("MEMLOOP_EMBED_FIXTURES").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join("fixtures")
        },
        PathBuf::from,
    )
}

pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

pub fn json(path: PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

pub fn floats(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

/// Where the golden tests run: `MEMLOOP_TEST_DEVICE` (`cpu`, `cuda`, `cuda:N`; default `cpu`).
/// `scripts/gpu-check.sh` sets it to run the same reference comparisons on a GPU.
pub fn test_device() -> DeviceChoice {
    std::env::var("MEMLOOP_TEST_DEVICE")
        .map(|d| d.parse().expect("MEMLOOP_TEST_DEVICE: cpu, cuda or cuda:N"))
        .unwrap_or_default()
}

/// The real default model, on [`test_device`]. `scripts/test.sh` fetches it first; a missing model fails loudly.
pub fn minilm() -> Embedder {
    let dir = default_model_dir();
    assert!(
        dir.join("model.safetensors").exists(),
        "the default model is not in {} — run scripts/fetch-model.sh (scripts/test.sh does)",
        dir.display()
    );
    Embedder::load(
        &dir,
        EmbedderOptions {
            threads: Some(2),
            device: test_device(),
            ..Default::default()
        },
    )
    .unwrap()
}

/// The public reference texts of the MiniLM fixture, in order.
pub fn reference_texts(reference: &serde_json::Value) -> Vec<&str> {
    reference["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .collect()
}
