//! Terms for the lexical index: lower-cased alphanumeric runs, English stop words dropped,
//! Snowball (Porter 2) stems.

use rust_stemmers::{Algorithm, Stemmer};

/// Words too common to tell memories apart.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "me", "my", "no", "nor", "not", "of", "on", "or", "our",
    "ours", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs",
    "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "yours",
];

/// Splits text into index terms.
pub(crate) struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl Analyzer {
    /// The terms of `text`, in order, repeats kept.
    pub(crate) fn terms(&self, text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .filter(|w| STOP_WORDS.binary_search(&w.as_str()).is_err())
            .map(|w| self.stemmer.stem(&w).into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn terms_are_lowercased_stemmed_and_without_stop_words() {
        let a = Analyzer::default();
        assert_eq!(
            a.terms("The Running dogs, and 3 cats' naps!"),
            ["run", "dog", "3", "cat", "nap"]
        );
        assert_eq!(a.terms("日本語 テキスト"), ["日本語", "テキスト"]);
        assert!(a.terms("  ... ").is_empty());
    }
}
