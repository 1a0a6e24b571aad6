//! `DocumentPooling::Sentences`: a stored text's vector is the normalised mean of its
//! sentences' vectors, each sentence embedded exactly as alone; a text of one sentence keeps
//! its whole-text vector (bit for bit on the CPU encoder, which packs a batch without padding;
//! within rounding on CUDA, where candle pads each batch to its longest text and the batch
//! changes the last bits); queries are embedded whole; the pooling is named in the fingerprint.

use memloop_embed::{default_model_dir, DeviceChoice, DocumentPooling, Embedder, EmbedderOptions};

use crate::common::*;

fn by_sentences() -> Embedder {
    Embedder::load(
        default_model_dir(),
        EmbedderOptions {
            threads: Some(2),
            device: test_device(),
            pooling: DocumentPooling::Sentences,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn a_text_is_the_mean_of_its_sentences_and_a_sentence_is_itself() {
    let (pooled, whole) = (by_sentences(), minilm());
    let sentences = [
        "I finally replaced the battery in my old laptop last Tuesday.",
        "It lasts about six hours now, which is plenty for the train.",
        "Next I want to upgrade its memory to sixteen gigabytes.",
    ];
    let text = sentences.join(" ");
    let one = "A single sentence about the weather in Lisbon in June.";
    let got = pooled.embed_documents(&[&text, one]).unwrap();
    let alone = whole.embed_documents(&sentences).unwrap();
    let mut mean = vec![0.0f32; whole.dim()];
    for v in &alone {
        for (m, x) in mean.iter_mut().zip(v) {
            *m += x;
        }
    }
    let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
    mean.iter_mut().for_each(|x| *x /= norm);
    assert!(
        cosine(&got[0], &mean) > 0.99999,
        "{}",
        cosine(&got[0], &mean)
    );
    let whole_text = whole.embed_documents(&[&text]).unwrap().remove(0);
    assert!(
        cosine(&got[0], &whole_text) < 0.999,
        "a different vector from the whole text's"
    );
    let alone = whole.embed_documents(&[one]).unwrap().remove(0);
    if test_device() == DeviceChoice::Cpu {
        assert_eq!(got[1], alone);
    } else {
        // Measured on an H200: the last bits differ (about 1e-7), from the batch it was in.
        let worst = got[1]
            .iter()
            .zip(&alone)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-5, "{worst}");
    }
    assert_eq!(
        pooled.embed_query(&text).unwrap(),
        whole.embed_query(&text).unwrap(),
        "queries are embedded whole"
    );
    let norm = got[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5);
}

#[test]
fn sentence_pooling_is_its_own_embedding_space() {
    let f = by_sentences().fingerprint().unwrap();
    assert_eq!(f.model, "all-MiniLM-L6-v2+sentences");
    assert_ne!(f, minilm().fingerprint().unwrap());
}

#[test]
fn text_past_the_model_limit_still_counts_by_sentences() {
    // 26 sentences of about 12 tokens: whole, the model reads the first 256 tokens; by
    // sentences, 15 pieces of one and a last of eleven, so a changed last sentence counts.
    let base: Vec<String> = (0..25)
        .map(|i| format!("Item number {i} on the list is a plain sentence."))
        .collect();
    let a = format!("{} The last one mentions a red bicycle.", base.join(" "));
    let b = format!("{} The last one mentions a green kayak.", base.join(" "));
    let whole = minilm().embed_documents(&[&a, &b]).unwrap();
    assert!(cosine(&whole[0], &whole[1]) > 0.99999);
    let pooled = by_sentences().embed_documents(&[&a, &b]).unwrap();
    assert!(cosine(&pooled[0], &pooled[1]) < 0.9999);
}

/// `embed_documents_with_sentences` gives the same pooled vectors as `embed_documents`, bit
/// for bit, and beside a text of several sentences each sentence's vector as embedded alone,
/// with its word count; a text of one sentence, or pooled whole, gets none.
#[test]
fn the_sentences_beside_the_pooled_vector_are_each_sentence_alone() {
    let (pooled, whole) = (by_sentences(), minilm());
    let text = "Thanks! I set up a 20-gallon tank for my daughter last weekend. \
                She named the first fish Bubbles.";
    let one = "A single sentence about the weather in Lisbon in June.";
    let got = pooled.embed_documents_with_sentences(&[text, one]).unwrap();
    assert_eq!(
        got.iter().map(|d| d.pooled.clone()).collect::<Vec<_>>(),
        pooled.embed_documents(&[text, one]).unwrap()
    );
    let pieces = memloop_embed::sentences(text);
    assert_eq!(pieces.len(), 3);
    assert_eq!(got[0].sentences.len(), 3);
    let alone = whole.embed_documents(&pieces).unwrap();
    for ((s, piece), v) in got[0].sentences.iter().zip(&pieces).zip(&alone) {
        assert_eq!(s.words, piece.split_whitespace().count());
        assert!(cosine(&s.vector, v) > 0.99999, "{piece}");
    }
    assert_eq!(got[0].sentences[0].words, 1, "\"Thanks!\"");
    assert!(got[1].sentences.is_empty());
    let plain = whole.embed_documents_with_sentences(&[text]).unwrap();
    assert!(plain[0].sentences.is_empty());
    assert_eq!(plain[0].pooled, whole.embed_documents(&[text]).unwrap()[0]);
}
