use std::path::Path;

use memloop_embed::{DeviceChoice, EmbedError, Embedder, EmbedderOptions};

use crate::common::{fixtures, minilm};

fn copy_model(to: &Path) {
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::copy(fixtures().join("nomic-tiny").join(f), to.join(f)).unwrap();
    }
}

fn load(dir: &Path) -> Result<Embedder, EmbedError> {
    Embedder::load(dir, EmbedderOptions::default())
}

#[test]
fn missing_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let e = load(&dir.path().join("nowhere")).unwrap_err();
    assert!(
        matches!(&e, EmbedError::MissingFile { path, .. } if path.ends_with("config.json")),
        "{e}"
    );
    copy_model(dir.path());
    std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    let e = load(dir.path()).unwrap_err();
    assert!(
        matches!(&e, EmbedError::MissingFile { path, .. } if path.ends_with("tokenizer.json")),
        "{e}"
    );
    copy_model(dir.path());
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    let e = load(dir.path()).unwrap_err();
    assert!(
        matches!(&e, EmbedError::MissingFile { path, .. } if path.ends_with("model.safetensors")),
        "{e}"
    );
}

#[test]
fn malformed_or_unknown_configs_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    copy_model(dir.path());
    std::fs::write(dir.path().join("config.json"), "{ not json").unwrap();
    assert!(matches!(
        load(dir.path()),
        Err(EmbedError::MalformedFile { .. })
    ));
    std::fs::write(dir.path().join("config.json"), r#"{"model_type": "llama"}"#).unwrap();
    assert!(
        matches!(load(dir.path()), Err(EmbedError::UnsupportedArchitecture { found, .. }) if found == "llama")
    );
    std::fs::write(dir.path().join("config.json"), r#"{"hidden_size": 3}"#).unwrap();
    assert!(matches!(
        load(dir.path()),
        Err(EmbedError::UnsupportedArchitecture { .. })
    ));
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"model_type": "nomic_bert", "n_embd": "wide"}"#,
    )
    .unwrap();
    assert!(matches!(
        load(dir.path()),
        Err(EmbedError::MalformedFile { .. })
    ));
}

#[test]
fn weights_that_do_not_fit_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    copy_model(dir.path());
    // A config that asks for a wider model than the weights hold.
    let cfg = std::fs::read_to_string(dir.path().join("config.json"))
        .unwrap()
        .replace("\"n_embd\": 64", "\"n_embd\": 128");
    std::fs::write(dir.path().join("config.json"), cfg).unwrap();
    assert!(matches!(
        load(dir.path()),
        Err(EmbedError::WeightsMismatch { .. })
    ));
    // Truncated weights.
    copy_model(dir.path());
    let w = std::fs::read(dir.path().join("model.safetensors")).unwrap();
    std::fs::write(dir.path().join("model.safetensors"), &w[..w.len() / 2]).unwrap();
    assert!(matches!(
        load(dir.path()),
        Err(EmbedError::MalformedFile { .. }) | Err(EmbedError::WeightsMismatch { .. })
    ));
    std::fs::write(dir.path().join("model.safetensors"), b"garbage").unwrap();
    assert!(matches!(
        load(dir.path()),
        Err(EmbedError::MalformedFile { .. })
    ));
}

#[test]
fn bad_options_are_typed() {
    let dir = fixtures().join("nomic-tiny");
    for opts in [
        EmbedderOptions {
            threads: Some(0),
            ..Default::default()
        },
        EmbedderOptions {
            batch_size: 0,
            ..Default::default()
        },
        EmbedderOptions {
            max_len: Some(1),
            ..Default::default()
        },
        EmbedderOptions {
            dimension: Some(0),
            ..Default::default()
        },
    ] {
        assert!(matches!(
            Embedder::load(&dir, opts),
            Err(EmbedError::InvalidOption { .. })
        ));
    }
    // Without the `cuda` feature any CUDA device is refused; with it, a device that does not
    // exist is (no machine has 99 GPUs). Either way a typed error, never a panic.
    let absent = if cfg!(feature = "cuda") { 99 } else { 0 };
    let err = Embedder::load(
        &dir,
        EmbedderOptions {
            device: DeviceChoice::Cuda(absent),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(err, EmbedError::InvalidOption { name: "device", .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("cpu"),
        "the error names the way out: {err}"
    );
}

#[test]
fn device_names_parse_and_print() {
    for (text, want) in [
        ("cpu", DeviceChoice::Cpu),
        ("CUDA", DeviceChoice::Cuda(0)),
        ("cuda:3", DeviceChoice::Cuda(3)),
        (" gpu ", DeviceChoice::Cuda(0)),
    ] {
        assert_eq!(text.parse::<DeviceChoice>().unwrap(), want, "{text}");
    }
    assert_eq!(
        DeviceChoice::Cuda(2)
            .to_string()
            .parse::<DeviceChoice>()
            .unwrap(),
        DeviceChoice::Cuda(2)
    );
    for bad in ["", "cuda:", "cuda:-1", "tpu", "cuda:1x"] {
        assert!(
            matches!(
                bad.parse::<DeviceChoice>(),
                Err(EmbedError::InvalidOption { name: "device", .. })
            ),
            "{bad:?}"
        );
    }
    assert!(DeviceChoice::Cpu.is_supported());
    assert_eq!(DeviceChoice::Cuda(0).is_supported(), cfg!(feature = "cuda"));
}

/// The native BERT encoder checks the weights against config.json as candle does: a layer of
/// the wrong size is a typed error naming the weights file, not a panic.
#[test]
fn bert_weights_that_do_not_fit_are_typed_on_the_native_encoder() {
    let model = minilm().dir().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        model.join("tokenizer.json"),
        dir.path().join("tokenizer.json"),
    )
    .unwrap();
    // A hard link where the platform has no symlink for a user (Windows); a copy otherwise.
    std::fs::hard_link(
        model.join("model.safetensors"),
        dir.path().join("model.safetensors"),
    )
    .or_else(|_| {
        std::fs::copy(
            model.join("model.safetensors"),
            dir.path().join("model.safetensors"),
        )
        .map(|_| ())
    })
    .unwrap();
    let cfg = std::fs::read_to_string(model.join("config.json")).unwrap();
    assert!(cfg.contains("\"intermediate_size\": 1536"));
    std::fs::write(
        dir.path().join("config.json"),
        cfg.replace("\"intermediate_size\": 1536", "\"intermediate_size\": 1600"),
    )
    .unwrap();
    match load(dir.path()) {
        Err(EmbedError::WeightsMismatch { path, .. }) => {
            assert!(path.ends_with("model.safetensors"))
        }
        other => panic!("expected WeightsMismatch, got {other:?}"),
    }
}
