//! Contexts (Memory-Only and Memory-Doc) and documents stored with their structures.

use super::{assemble, Candidate, Context, Precision};
use crate::error::Result;
use crate::hooks::{extract, extract_for};
use crate::invalid::InvalidInput;
use crate::item::{scope_covers, Kind, MemoryId, NewMemory, Scope};
use crate::lexical::Analyzer;
use crate::memory::views::Advanced;
use crate::memory::Memory;
use crate::retrieve::Hit;
use crate::vocabulary::{
    ContextMode, ContextRequest, DocumentIds, DocumentRef, Structures, CHUNK_OVERLAP, CHUNK_TOKENS,
};

impl Memory {
    /// Retrieves for `request.query` and assembles the hits into at most `request.budget`
    /// tokens (see [`crate::context`]).
    ///
    /// # Errors
    /// As [`Memory::retrieve`]; [`crate::Error::InvalidInput`] for a key share outside (0, 1].
    pub fn context(&self, request: &ContextRequest) -> Result<Context> {
        if !(request.key_share > 0.0 && request.key_share <= 1.0) {
            return Err(InvalidInput::KeyShare(request.key_share).into());
        }
        let hits = self.retrieve(&request.query, request.strategy)?;
        let query = Some(request.query.text.as_str());
        let f = &request.query.filter;
        let bound = Scope {
            user: f.user.clone(),
            agent: f.agent.clone(),
            session: f.session.clone(),
        };
        self.assemble_hits(
            &hits,
            request.budget,
            request.key_share,
            request.mode,
            (query, &bound),
        )
    }

    /// [`crate::Advanced::context_of`]; with the `query` known, a memory stored without lower
    /// precisions is shortened around the sentences that answer it ([`extract_for`]) rather
    /// than to its leading sentences. Documents are served only within `bound` (the query's
    /// scope).
    fn assemble_hits(
        &self,
        hits: &[Hit],
        budget: usize,
        key_share: f32,
        mode: ContextMode,
        (query, bound): (Option<&str>, &Scope),
    ) -> Result<Context> {
        let analyzer = Analyzer::default();
        let query_terms: Option<Vec<String>> = query.map(|q| {
            let mut terms = analyzer.terms(q);
            terms.sort_unstable();
            terms.dedup();
            terms
        });
        let count = |text: &str| match &self.inner.options.hooks.token_counter {
            Some(c) => c.count(text),
            None => self.inner.embedder.count_tokens(text),
        };
        let keys = |n: usize| ((n as f32 * key_share).ceil() as usize).max(1);
        let now = self.inner.now();
        let candidates: Vec<Candidate> = match mode {
            ContextMode::Memories => {
                let n_key = keys(hits.len());
                hits.iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let key = i < n_key;
                        let base = if key {
                            Precision::Original
                        } else {
                            Precision::Brief
                        };
                        // A memory found in the long-term tier is served a step lower (its
                        // explanation keeps the tier it was found in; the hit reinforced it).
                        let shift = h.explain.feedback.map_or(0, |f| f.precision_shift)
                            - i8::from(h.explain.tier == crate::item::Tier::LongTerm);
                        let lead = (h.item.kind == Kind::Turn)
                            .then(|| h.item.subject.as_ref().map(|s| format!("{s}:")))
                            .flatten();
                        let fallback = match &query_terms {
                            Some(terms) => {
                                extract_for(&h.item.text, terms, &analyzer, lead.as_deref())
                            }
                            None => extract(&h.item.text),
                        };
                        let texts = [
                            h.item.brief.clone().unwrap_or(fallback.brief),
                            h.item.concise.clone().unwrap_or(fallback.concise),
                            h.item.text.clone(),
                        ];
                        Candidate {
                            id: h.item.id,
                            score: h.score,
                            key,
                            start: base.shifted(shift),
                            texts: texts.map(|t| dated(&h.item, t, now)),
                        }
                    })
                    .collect()
            }
            ContextMode::Documents => {
                let docs = self.documents_within(hits, bound)?;
                let n_key = keys(docs.len());
                docs.into_iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let s = match &query_terms {
                            Some(terms) => extract_for(&d.text, terms, &analyzer, None),
                            None => extract(&d.text),
                        };
                        let key = i < n_key;
                        Candidate {
                            id: d.id.unwrap_or(d.hits[0]),
                            score: d.score,
                            key,
                            start: if key {
                                Precision::Original
                            } else {
                                Precision::Concise
                            },
                            texts: [s.brief, s.concise, d.text],
                        }
                    })
                    .collect()
            }
        };
        Ok(assemble(&candidates, budget, &count))
    }

    /// [`crate::Advanced::documents`] for a caller confined to `bound`: a hit's document is looked
    /// up among its own user's documents only — of the hit's exact scope, else of its user and
    /// agent, else of its user — and served only if it lies within `bound` too. Another user's
    /// document under the same key is neither read nor served in the hit's place.
    pub(crate) fn documents_within(&self, hits: &[Hit], bound: &Scope) -> Result<Vec<DocumentRef>> {
        let mut out: Vec<DocumentRef> = Vec::new();
        for h in hits {
            let keys: Vec<String> = match (h.item.kind, &h.item.subject) {
                (Kind::Document, Some(s)) => vec![s.clone()],
                _ if h.item.sources.is_empty() => vec![format!("memory/{}", h.item.id)],
                _ => h.item.sources.iter().map(|s| s.document.clone()).collect(),
            };
            for key in keys {
                if let Some(d) = out.iter_mut().find(|d| d.document == key) {
                    if !d.hits.contains(&h.item.id) {
                        d.hits.push(h.item.id);
                    }
                    continue;
                }
                let stored = self.document_of(h, &key, bound)?;
                let text = match stored {
                    Some(id) if id == h.item.id => h.item.text.clone(),
                    Some(id) => match self.inner.store.item(id)? {
                        Some(doc) => doc.text,
                        None => h.item.text.clone(),
                    },
                    None => h.item.text.clone(),
                };
                out.push(DocumentRef {
                    document: key,
                    id: stored,
                    text,
                    hits: vec![h.item.id],
                    score: h.score,
                });
            }
        }
        Ok(out)
    }

    /// The document `key` of hit `h`'s namespace and user (see [`Memory::documents_within`]).
    fn document_of(&self, h: &Hit, key: &str, bound: &Scope) -> Result<Option<MemoryId>> {
        let [user, agent, session] = h.item.scope_fields();
        let mut scopes = vec![[user, agent, session]];
        for wider in [[user, agent, None], [user, None, None]] {
            if !scopes.contains(&wider) {
                scopes.push(wider);
            }
        }
        for scope in scopes {
            if !scope_covers(bound.fields(), scope) {
                continue;
            }
            let found =
                self.inner
                    .store
                    .by_subject(&h.item.namespace, Kind::Document, key, scope)?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// Byte spans of `text` of at most [`CHUNK_TOKENS`] tokens each (a single word longer than
    /// that is a chunk of its own), consecutive ones sharing about [`CHUNK_OVERLAP`] tokens,
    /// cut at whitespace.
    fn chunk(&self, text: &str) -> Vec<(usize, usize)> {
        let words: Vec<(usize, usize)> = text
            .split_whitespace()
            .map(|w| {
                let start = w.as_ptr() as usize - text.as_ptr() as usize;
                (start, start + w.len())
            })
            .collect();
        let cost: Vec<usize> = words
            .iter()
            .map(|&(a, b)| self.inner.embedder.count_tokens(&text[a..b]).max(1))
            .collect();
        let mut spans = Vec::new();
        let mut start = 0;
        while start < words.len() {
            let (mut end, mut tokens) = (start, 0);
            while end < words.len() && (end == start || tokens + cost[end] <= CHUNK_TOKENS) {
                tokens += cost[end];
                end += 1;
            }
            spans.push((words[start].0, words[end - 1].1));
            if end == words.len() {
                break;
            }
            // Step back over about CHUNK_OVERLAP tokens, always moving forward.
            let (mut back, mut overlap) = (end, 0);
            while back > start + 1 && overlap + cost[back - 1] <= CHUNK_OVERLAP {
                back -= 1;
                overlap += cost[back];
            }
            start = back;
        }
        spans
    }
}

/// A memory's line as a context serves it: a conversation turn prefixed with when it was
/// spoken ("[2023-05-08 13:56] Caroline: …"; the speaker leads its text), a fact whose validity
/// ended followed by when.
fn dated(item: &crate::item::MemoryItem, text: String, now: crate::clock::Timestamp) -> String {
    let text = if item.kind == crate::item::Kind::Turn {
        format!("[{}] {text}", crate::time::format_minute(item.valid_from))
    } else {
        text
    };
    match ended(item, now) {
        Some(note) => format!("{text} {note}"),
        None => text,
    }
}

/// "(no longer true since 2024-06-01T00:00:00Z)" for a memory whose validity ended by `now`,
/// so the model reading a context does not take an old fact for a current one.
fn ended(item: &crate::item::MemoryItem, now: crate::clock::Timestamp) -> Option<String> {
    item.valid_until.filter(|&until| until <= now).map(|until| {
        format!(
            "(no longer true since {})",
            crate::time::format_rfc3339(until)
        )
    })
}

impl<'a> Advanced<'a> {
    /// Assembles given hits (best first) into at most `budget` tokens.
    ///
    /// # Errors
    /// [`crate::Error::Store`]; the summarizer's error.
    pub fn context_of(
        &self,
        hits: &[Hit],
        budget: usize,
        key_share: f32,
        mode: ContextMode,
    ) -> Result<Context> {
        self.memory
            .assemble_hits(hits, budget, key_share, mode, (None, &Scope::default()))
    }

    /// Memory-Doc: the source documents the hits point to, in the order of their best hit,
    /// each once. A hit without a source stands for itself.
    ///
    /// # Errors
    /// [`crate::Error::Store`].
    pub fn documents(&self, hits: &[Hit]) -> Result<Vec<DocumentRef>> {
        self.memory.documents_within(hits, &Scope::default())
    }

    /// Mixed memory: stores document `text` under `key` (a [`crate::Kind::Document`] memory), its
    /// chunks ([`crate::context::CHUNK_TOKENS`] tokens with [`crate::context::CHUNK_OVERLAP`]
    /// overlap, each sourced to the document with its byte span), and the caller's triples, facts
    /// and summaries, all sourced to the document, in one transaction. Only exact duplicates merge
    /// (overlapping chunks stay apart).
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty key or text; as [`Memory::remember_batch`].
    pub fn remember_document(
        &self,
        key: &str,
        text: &str,
        structures: &Structures,
    ) -> Result<DocumentIds> {
        if key.trim().is_empty() || text.trim().is_empty() {
            return Err(InvalidInput::EmptyDocument.into());
        }
        crate::item::check_text(text, self.memory.inner.options.max_text_bytes)
            .map_err(|e| e.at(format!("document {key:?}")))?;
        let spans = self.memory.chunk(text);
        let summary = self.memory.inner.options.hooks.summarizer.summarize(text)?;
        let mut batch = vec![NewMemory::new(text)
            .kind(Kind::Document)
            .subject(key)
            .precisions(summary.concise, summary.brief)];
        for &(a, b) in &spans {
            batch.push(
                NewMemory::new(&text[a..b])
                    .kind(Kind::Chunk)
                    .source(key, Some((a as u64, b as u64))),
            );
        }
        for (h, r, t) in &structures.triples {
            batch.push(
                NewMemory::new(format!("{h} {r} {t}"))
                    .kind(Kind::Triple)
                    .triple(h, r, t)
                    .source(key, None),
            );
        }
        for f in &structures.facts {
            batch.push(NewMemory::new(f).kind(Kind::Fact).source(key, None));
        }
        for s in &structures.summaries {
            batch.push(NewMemory::new(s).kind(Kind::Summary).source(key, None));
        }
        let ids = self.memory.remember_distinct(batch)?;
        Ok(DocumentIds {
            document: ids[0],
            chunks: ids[1..=spans.len()].to_vec(),
            structures: ids[spans.len() + 1..].to_vec(),
        })
    }
}
