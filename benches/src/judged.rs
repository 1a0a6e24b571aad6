//! Labelled retrieval data for `retrieval-bench`: BEIR (SciFact) and LoCoMo read into stores'
//! worth of documents and judged queries, and the scores (nDCG@10, Recall@10) over them. The
//! data is read by path and never copied.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// Documents and judged queries of one store.
pub struct Corpus {
    /// The documents: key and text.
    pub docs: Vec<(String, String)>,
    /// The conversation's sessions (LoCoMo): when each began and its turns (key, speaker,
    /// text); `docs` holds the same turns as "speaker: text".
    pub sessions: Vec<Session>,
    /// Query text, its relevant document keys and its category, if the data has them.
    pub queries: Vec<JudgedQuery>,
}

/// One session of a LoCoMo conversation.
pub struct Session {
    /// When it began, ms since the Unix epoch.
    pub time: i64,
    /// Its turns: key, speaker, text.
    pub turns: Vec<(String, String, String)>,
}

/// "1:56 pm on 8 May, 2023" as ms since the Unix epoch (UTC).
pub fn locomo_time(s: &str) -> Option<i64> {
    let (clock, date) = s.split_once(" on ")?;
    let (hm, half) = clock.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    let h = h % 12
        + if half.eq_ignore_ascii_case("pm") {
            12
        } else {
            0
        };
    let parts: Vec<&str> = date.split([' ', ',']).filter(|p| !p.is_empty()).collect();
    let [d, month, y] = parts[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let mo = MONTHS.iter().position(|x| *x == month)? + 1;
    let day = memloop::time::parse_rfc3339(&format!(
        "{y}-{mo:02}-{:02}T00:00:00Z",
        d.parse::<u32>().ok()?
    ))?;
    Some(day + (h * 60 + m) * 60_000)
}

/// A query with its relevant document keys.
pub struct JudgedQuery {
    /// The question.
    pub text: String,
    /// The keys of its relevant documents.
    pub relevant: Vec<String>,
    /// LoCoMo's question category (single-hop, multi-hop, temporal, open-domain, adversarial).
    pub category: Option<&'static str>,
    /// The answer, where the data gives one (LoCoMo).
    pub answer: Option<String>,
}

/// LoCoMo's category numbers, as its paper names them.
fn locomo_category(n: u64) -> Option<&'static str> {
    match n {
        1 => Some("multi-hop"),
        2 => Some("temporal"),
        3 => Some("open-domain"),
        4 => Some("single-hop"),
        5 => Some("adversarial"),
        _ => None,
    }
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("a line of {}", path.display())))
        .collect()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A BEIR dataset (`corpus.jsonl`, `queries.jsonl`, `qrels/SPLIT.tsv`) as one corpus: each
/// document's text is its title and text.
pub fn load_beir(dir: &Path, split: &str) -> Result<Vec<Corpus>> {
    let docs = read_jsonl(&dir.join("corpus.jsonl"))?
        .iter()
        .map(|d| {
            let text = format!("{} {}", str_of(d, "title"), str_of(d, "text"));
            (str_of(d, "_id").to_string(), text.trim().to_string())
        })
        .collect();
    let texts: HashMap<String, String> = read_jsonl(&dir.join("queries.jsonl"))?
        .iter()
        .map(|q| (str_of(q, "_id").to_string(), str_of(q, "text").to_string()))
        .collect();
    let qrels = std::fs::read_to_string(dir.join(format!("qrels/{split}.tsv")))
        .with_context(|| format!("reading qrels/{split}.tsv"))?;
    let mut relevant: Vec<(String, Vec<String>)> = Vec::new();
    for line in qrels.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 3 || f[2].trim() == "0" {
            continue;
        }
        match relevant.iter_mut().find(|(q, _)| q == f[0]) {
            Some((_, docs)) => docs.push(f[1].to_string()),
            None => relevant.push((f[0].to_string(), vec![f[1].to_string()])),
        }
    }
    let queries = relevant
        .into_iter()
        .map(|(q, docs)| {
            Ok(JudgedQuery {
                text: texts
                    .get(&q)
                    .with_context(|| format!("query {q} has no text"))?
                    .clone(),
                relevant: docs,
                category: None,
                answer: None,
            })
        })
        .collect::<Result<_>>()?;
    Ok(vec![Corpus {
        docs,
        queries,
        sessions: Vec::new(),
    }])
}

/// The LoCoMo file: each conversation a corpus, its turns the documents ("speaker: text", with
/// " (image: caption)" when the turn shared one), its questions with evidence the queries.
pub fn load_locomo(path: &Path) -> Result<Vec<Corpus>> {
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let Some(conversations) = data.as_array() else {
        bail!("{}: expected a list of conversations", path.display());
    };
    let mut out = Vec::new();
    for c in conversations {
        let conv = &c["conversation"];
        let mut docs = Vec::new();
        let mut sessions = Vec::new();
        for s in 1.. {
            let Some(turns) = conv.get(format!("session_{s}")).and_then(Value::as_array) else {
                break;
            };
            let date = str_of(conv, &format!("session_{s}_date_time"));
            let time = locomo_time(date).with_context(|| format!("session {s} date {date:?}"))?;
            let mut session = Session {
                time,
                turns: Vec::new(),
            };
            for t in turns {
                let mut text = str_of(t, "text").to_string();
                if let Some(cap) = t.get("blip_caption").and_then(Value::as_str) {
                    text.push_str(&format!(" (image: {cap})"));
                }
                let (key, speaker) = (str_of(t, "dia_id"), str_of(t, "speaker"));
                docs.push((key.to_string(), format!("{speaker}: {text}")));
                session
                    .turns
                    .push((key.to_string(), speaker.to_string(), text));
            }
            sessions.push(session);
        }
        let keys: std::collections::HashSet<&str> = docs.iter().map(|d| d.0.as_str()).collect();
        let queries = c["qa"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|q| {
                let evidence: Vec<String> = q["evidence"]
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|e| keys.contains(e))
                    .map(String::from)
                    .collect();
                (!evidence.is_empty()).then(|| JudgedQuery {
                    text: str_of(q, "question").to_string(),
                    relevant: evidence,
                    category: q["category"].as_u64().and_then(locomo_category),
                    answer: match &q["answer"] {
                        Value::String(a) => Some(a.clone()),
                        Value::Number(n) => Some(n.to_string()),
                        _ => None,
                    },
                })
            })
            .collect();
        out.push(Corpus {
            docs,
            queries,
            sessions,
        });
    }
    Ok(out)
}

/// Sums of nDCG@10 and Recall@10 over some queries.
#[derive(Default, Clone, Copy)]
pub struct Sums {
    /// Sum of nDCG@10.
    pub ndcg: f64,
    /// Sum of Recall@10.
    pub recall: f64,
    /// Queries summed.
    pub queries: usize,
}

impl Sums {
    /// Mean nDCG@10.
    pub fn ndcg(&self) -> f64 {
        self.ndcg / self.queries as f64
    }
    /// Mean Recall@10.
    pub fn recall(&self) -> f64 {
        self.recall / self.queries as f64
    }
}

/// One strategy's scores: over all queries, per category, and the time it took.
#[derive(Default)]
pub struct Totals {
    /// Over every query.
    pub all: Sums,
    /// Per question category.
    pub categories: std::collections::BTreeMap<&'static str, Sums>,
    /// Time spent ranking.
    pub seconds: f64,
}

impl Totals {
    /// Adds one query's scores (to its category too, if it has one).
    pub fn add(&mut self, category: Option<&'static str>, ndcg: f64, recall: f64) {
        let sums = std::iter::once(&mut self.all)
            .chain(category.map(|c| self.categories.entry(c).or_default()));
        for s in sums {
            s.ndcg += ndcg;
            s.recall += recall;
            s.queries += 1;
        }
    }
}

/// nDCG@10 and Recall@10 of `ranking` against binary relevance.
pub fn score(ranking: &[String], relevant: &[String]) -> (f64, f64) {
    let rel = |k: &String| relevant.contains(k);
    let dcg: f64 = ranking
        .iter()
        .take(10)
        .enumerate()
        .filter(|(_, k)| rel(k))
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let ideal: f64 = (0..relevant.len().min(10))
        .map(|i| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    let mut found: Vec<&String> = ranking.iter().take(10).filter(|k| rel(k)).collect();
    found.dedup();
    (dcg / ideal, found.len() as f64 / relevant.len() as f64)
}
