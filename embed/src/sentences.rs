//! How a stored text becomes one vector: pooled over the whole text, or as the mean of its
//! sentences' vectors ([`DocumentPooling`]), and the sentence splitter the second uses.

/// How [`crate::Embedder::embed_documents`] makes a text's one vector.
///
/// A long text embedded whole is an average over every token: one sentence that answers a
/// question is diluted by the others (and text past the model's limit, 256 tokens for MiniLM,
/// is cut off). Embedding each sentence alone and averaging the sentences' unit vectors gives
/// every sentence an equal say, over the whole text. Measured on LongMemEval-S dev (user turns
/// of 6–300 tokens, questions that paraphrase one sentence of them; all-MiniLM-L6-v2, exact
/// cosine): turn recall_all@10 0.750 → 0.827, ndcg_any@10 0.668 → 0.720; on SciFact's
/// abstracts, where a claim matches the whole text, nDCG@10 0.645 → 0.619 (BENCHMARKS.md). A
/// text of one sentence gets the same vector either way. The tokens embedded are about the
/// same and shorter inputs make attention cheaper: 200-token chunks embed about 1.2x as fast.
///
/// Queries are always embedded whole. The choice is part of the model's fingerprint
/// (`<model>+sentences`): a store never mixes the two kinds of vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DocumentPooling {
    /// Mean pooling over the whole text's tokens (sentence-transformers' recipe).
    #[default]
    Whole,
    /// The normalised mean of the text's sentences' vectors (at most [`MAX_PIECES`] pieces,
    /// the last one holding the rest).
    Sentences,
}

/// The most pieces one text is embedded as: the last piece holds the rest of the text (cut at
/// the model's limit), so a text costs at most this many model inputs.
pub const MAX_PIECES: usize = 16;

impl DocumentPooling {
    /// "whole" or "sentences".
    pub fn name(self) -> &'static str {
        match self {
            DocumentPooling::Whole => "whole",
            DocumentPooling::Sentences => "sentences",
        }
    }

    /// The pooling named `name` ("whole" or "sentences").
    pub fn parse(name: &str) -> Option<DocumentPooling> {
        match name {
            "whole" => Some(DocumentPooling::Whole),
            "sentences" => Some(DocumentPooling::Sentences),
            _ => None,
        }
    }

    /// The model name a fingerprint gives with this pooling: `model` itself whole,
    /// `model+sentences` by sentences.
    pub fn model_name(self, model: &str) -> String {
        match self {
            DocumentPooling::Whole => model.to_string(),
            p => format!("{model}+{}", p.name()),
        }
    }

    /// The pooling a fingerprint's model name was made with ([`DocumentPooling::model_name`]);
    /// whole for a name without one.
    pub fn of_model_name(name: &str) -> DocumentPooling {
        name.split('+')
            .skip(1)
            .find_map(DocumentPooling::parse)
            .unwrap_or_default()
    }
}

/// The sentences of `text`, in order: a piece ends after `.`, `!` or `?` followed by white
/// space, or at a line break; a piece without a letter or digit ("...", "--") joins the next;
/// the [`MAX_PIECES`]th piece holds the rest. Short sentences stay apart: on LoCoMo's chat
/// turns ("Hey Mel! Good to see you. …") joining pieces under 4 words cost 0.010 R@10 against
/// splitting every sentence (`docs/bench-log/2026-11.md`). Each piece is trimmed; a text of
/// one piece is returned as one piece, itself untrimmed, so its vector is the whole text's.
pub(crate) fn pieces(text: &str) -> Vec<&str> {
    // Byte offsets where each piece ends (the last ends at the text's end).
    let mut ends: Vec<usize> = Vec::new();
    let mut start = 0;
    // Whether `text[start..]` read so far holds a letter or digit: carried forward, so each
    // character is looked at once (rescanning the open piece at every closing made a text of
    // closings without words, ". " x 256k, cost minutes).
    let mut worded = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if ends.len() == MAX_PIECES - 1 {
            break;
        }
        worded |= c.is_alphanumeric();
        let closes = match c {
            '\n' => true,
            '.' | '!' | '?' => chars.peek().is_none_or(|&(_, next)| next.is_whitespace()),
            _ => false,
        };
        if closes && worded {
            let end = i + c.len_utf8();
            ends.push(end);
            start = end;
            worded = false;
        }
    }
    // A remainder without a word (a closing quote, an emoji's spaces) joins the piece before.
    if !has_word(&text[start..]) {
        ends.pop();
    }
    if ends.is_empty() {
        return vec![text];
    }
    ends.push(text.len());
    let mut from = 0;
    ends.iter()
        .map(|&end| {
            let piece = text[from..end].trim();
            from = end;
            piece
        })
        .collect()
}

/// The sentences a stored text pooled by sentences is embedded as, in order (the splitter
/// [`DocumentPooling::Sentences`] uses): a caller caching sentence vectors cuts a text as the
/// embedder does.
pub fn sentences(text: &str) -> Vec<&str> {
    pieces(text)
}

/// Whether `s` holds a letter or a digit.
fn has_word(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_at_their_ends_and_wordless_pieces_join_the_next() {
        let text = "I bought a new bike last week. It is red! Do you like it? Yes. ... Bye.";
        assert_eq!(
            pieces(text),
            vec![
                "I bought a new bike last week.",
                "It is red!",
                "Do you like it?",
                "Yes.",
                "... Bye."
            ]
        );
        // Decimals, versions and abbreviations without a space after the dot do not end one.
        assert_eq!(
            pieces(
                "Version 3.5 costs 2.99 and runs on v1.2.3 for everyone.\nThen a second line here."
            ),
            vec![
                "Version 3.5 costs 2.99 and runs on v1.2.3 for everyone.",
                "Then a second line here."
            ]
        );
    }

    #[test]
    fn a_text_of_one_sentence_is_itself() {
        for text in [
            "  one sentence, untrimmed ",
            "Hi there.  ",
            "",
            "Hi. ...",
            "?! no end",
        ] {
            assert_eq!(pieces(text), vec![text]);
        }
    }

    #[test]
    fn a_long_text_makes_at_most_max_pieces_the_last_holding_the_rest() {
        let text = "This is sentence number one. ".repeat(40);
        let p = pieces(&text);
        assert_eq!(p.len(), MAX_PIECES);
        assert!(p[..MAX_PIECES - 1]
            .iter()
            .all(|s| *s == "This is sentence number one."));
        assert_eq!(p[MAX_PIECES - 1].matches("number one").count(), 40 - 15);
    }

    #[test]
    fn every_piece_is_a_slice_of_the_text_in_order_with_nothing_lost() {
        let text = "Sure thing.\n\nWhat about the blue one? I saw it at the market today. ok\n :)";
        let joined: String = pieces(text).concat();
        let squeezed = |s: &str| s.split_whitespace().collect::<String>();
        assert_eq!(squeezed(&joined), squeezed(text));
    }

    #[test]
    fn a_text_of_closings_without_words_is_split_in_one_pass() {
        // The audit's shapes (round 4, M5): each took minutes when the open piece was
        // rescanned at every closing. Counting the characters looked at would need a hook in
        // the splitter; the result is checked here and the time in the embed benchmark.
        for (unit, n) in [(". ", 256 * 1024), ("\n", 512 * 1024), ("?\n", 256 * 1024)] {
            let text = format!("{}final word", unit.repeat(n));
            assert_eq!(pieces(&text), vec![text.as_str()]);
            let text = format!("{}final word. And more.", unit.repeat(n));
            let p = pieces(&text);
            assert_eq!(p.len(), 2);
            assert_eq!(p[1], "And more.");
        }
    }

    #[test]
    fn the_pooling_is_named_in_the_model_name() {
        let name = DocumentPooling::Sentences.model_name("all-MiniLM-L6-v2+int8");
        assert_eq!(name, "all-MiniLM-L6-v2+int8+sentences");
        assert_eq!(
            DocumentPooling::of_model_name(&name),
            DocumentPooling::Sentences
        );
        assert_eq!(
            DocumentPooling::of_model_name("all-MiniLM-L6-v2+int8"),
            DocumentPooling::Whole
        );
        assert_eq!(DocumentPooling::Whole.model_name("m"), "m");
    }
}
