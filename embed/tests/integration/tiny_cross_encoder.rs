//! Builds a tiny random BERT cross-encoder checkpoint, as Hugging Face's
//! `BertForSequenceClassification` saves one: 2 layers, hidden 32, 2 heads of 16, intermediate
//! 64, 64 positions, 2 token types, one label; the bert-base-uncased tokenizer of the
//! `nomic-tiny` fixture. The weights come from a fixed seed, so every build is the same file:
//! `fixtures/cross-encoder-tiny/expected.json` holds what transformers computes from it.
//!
//! Shared by the embedder's tests and the engine's reranker tests (included by path).

use std::collections::BTreeMap;
use std::path::Path;

/// Hidden size of the tiny checkpoint.
pub const HIDDEN: usize = 32;
const LAYERS: usize = 2;
const INTER: usize = 64;
const POSITIONS: usize = 64;
const VOCAB: usize = 30522;

/// splitmix64: a fixed stream of values in [-scale, scale).
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn values(&mut self, n: usize, center: f32, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|_| {
                let unit = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
                center + scale * (2.0 * unit - 1.0)
            })
            .collect()
    }
}

/// Writes config.json, tokenizer.json and model.safetensors of the tiny cross-encoder into
/// `dir`; `fixtures` is the embedder's test fixtures folder (for the tokenizer).
pub fn write(dir: &Path, fixtures: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut stream = Stream(20_261_126);
    let mut tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)> = BTreeMap::new();
    let mut put = |name: &str, shape: &[usize], center: f32, scale: f32| {
        let values = stream.values(shape.iter().product(), center, scale);
        tensors.insert(name.to_string(), (shape.to_vec(), values));
    };
    let h = HIDDEN;
    put(
        "bert.embeddings.word_embeddings.weight",
        &[VOCAB, h],
        0.0,
        0.5,
    );
    put(
        "bert.embeddings.position_embeddings.weight",
        &[POSITIONS, h],
        0.0,
        0.5,
    );
    put(
        "bert.embeddings.token_type_embeddings.weight",
        &[2, h],
        0.0,
        0.5,
    );
    put("bert.embeddings.LayerNorm.weight", &[h], 1.0, 0.1);
    put("bert.embeddings.LayerNorm.bias", &[h], 0.0, 0.1);
    for i in 0..LAYERS {
        let l = format!("bert.encoder.layer.{i}");
        for part in ["query", "key", "value"] {
            put(
                &format!("{l}.attention.self.{part}.weight"),
                &[h, h],
                0.0,
                0.3,
            );
            put(&format!("{l}.attention.self.{part}.bias"), &[h], 0.0, 0.1);
        }
        put(
            &format!("{l}.attention.output.dense.weight"),
            &[h, h],
            0.0,
            0.2,
        );
        put(&format!("{l}.attention.output.dense.bias"), &[h], 0.0, 0.1);
        put(
            &format!("{l}.attention.output.LayerNorm.weight"),
            &[h],
            1.0,
            0.1,
        );
        put(
            &format!("{l}.attention.output.LayerNorm.bias"),
            &[h],
            0.0,
            0.1,
        );
        put(
            &format!("{l}.intermediate.dense.weight"),
            &[INTER, h],
            0.0,
            0.2,
        );
        put(&format!("{l}.intermediate.dense.bias"), &[INTER], 0.0, 0.1);
        put(&format!("{l}.output.dense.weight"), &[h, INTER], 0.0, 0.2);
        put(&format!("{l}.output.dense.bias"), &[h], 0.0, 0.1);
        put(&format!("{l}.output.LayerNorm.weight"), &[h], 1.0, 0.1);
        put(&format!("{l}.output.LayerNorm.bias"), &[h], 0.0, 0.1);
    }
    put("bert.pooler.dense.weight", &[h, h], 0.0, 0.3);
    put("bert.pooler.dense.bias", &[h], 0.0, 0.1);
    put("classifier.weight", &[1, h], 0.0, 0.5);
    put("classifier.bias", &[1], 0.0, 0.1);

    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .into_iter()
        .map(|(name, (shape, values))| {
            let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            (name, shape, data)
        })
        .collect();
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = bytes
        .iter()
        .map(|(name, shape, data)| {
            let view =
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), data)
                    .unwrap();
            (name.clone(), view)
        })
        .collect();
    safetensors::serialize_to_file(views, None, &dir.join("model.safetensors")).unwrap();

    let config = serde_json::json!({
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "vocab_size": VOCAB,
        "hidden_size": h,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": 2,
        "intermediate_size": INTER,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "id2label": {"0": "LABEL_0"},
        "label2id": {"LABEL_0": 0}
    });
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_string_pretty(&config).unwrap(),
    )
    .unwrap();
    std::fs::copy(
        fixtures.join("nomic-tiny/tokenizer.json"),
        dir.join("tokenizer.json"),
    )
    .unwrap();
}
