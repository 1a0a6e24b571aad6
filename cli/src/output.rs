//! Printing items and hits, as JSON or as text for people, and a registry operation's reply:
//! its answer's JSON (`--json`) or text rendered from that JSON, the same whether the store was
//! opened here or the call was forwarded to the process serving it.

use memloop::{MemoryItem, Request};
use serde_json::Value;

use crate::mcp::tools::Reply;
use crate::tool_call::{Asked, ToolCall};

/// Prints the reply to `call`: the answer's JSON when it asks for JSON,
/// else text for people (a recall's hits as rows, with `explain` lines when asked; a remember's
/// id alone on stdout, what de-duplication did on stderr; the operation's own text otherwise,
/// each operation named so that a new one must choose).
pub fn print_reply(call: &ToolCall, reply: &Reply) {
    if call.json {
        println!("{}", reply.structured);
        return;
    }
    let a = &reply.structured;
    let Asked::Operation(request) = &call.asked else {
        // The shared store's own calls (a check) print their text.
        println!("{}", reply.text);
        return;
    };
    match request.as_ref() {
        Request::Recall(recall) => {
            let hits = a["hits"].as_array().map(Vec::as_slice).unwrap_or_default();
            if hits.is_empty() {
                println!("no memories match");
            }
            for h in hits {
                println!(
                    "{:>3}  {:.3}  #{:<6} {:<10} {}",
                    h["rank"].as_u64().unwrap_or(0) + 1,
                    h["score"].as_f64().unwrap_or(0.0),
                    h["id"],
                    h["kind"].as_str().unwrap_or(""),
                    shorten(h["text"].as_str().unwrap_or(""), 90)
                );
                if recall.explain {
                    println!("       {}", explain_json_line(&h["explain"]));
                }
            }
        }
        Request::Remember(_) => {
            println!("{}", a["id"]);
            match a["action"].as_str() {
                Some("merged") => eprintln!("memloop: merged into memory {} (it says the same)", a["id"]),
                Some("superseded") => eprintln!(
                    "memloop: new version {} of fact {}, which it supersedes (kept as history)",
                    a["id"], a["previous"]
                ),
                _ => {}
            }
        }
        Request::Get(_) => match serde_json::from_value::<MemoryItem>(a.clone()) {
            Ok(item) => print!("{}", item_text(&item)),
            Err(_) => println!("{}", reply.text),
        },
        Request::Stats(_) => println!(
            "{} memories ({} working, {} long-term), {} indexed\nchange {} (index checkpoint {})\nmodel {}",
            a["memories"], a["working"], a["long_term"], a["indexed"], a["seq"], a["checkpoint"],
            a["model"].as_str().unwrap_or("")
        ),
        Request::List(_) => {
            for m in a["memories"].as_array().map(Vec::as_slice).unwrap_or_default() {
                println!(
                    "#{:<6} {:<10} {}",
                    m["id"],
                    m["kind"].as_str().unwrap_or(""),
                    shorten(m["text"].as_str().unwrap_or(""), 90)
                );
            }
        }
        // The operation's own text, written for a model, reads as well for a person.
        Request::Update(_)
        | Request::RememberConversation(_)
        | Request::Context(_)
        | Request::Feedback(_)
        | Request::RecordTask(_)
        | Request::Observe(_)
        | Request::Forget(_)
        | Request::ExplainDecay(_)
        | Request::Sweep(_)
        | Request::Export(_)
        | Request::Import(_)
        | Request::Sync(_) => println!("{}", reply.text),
    }
}

/// A hit's explanation (as JSON) on one line.
fn explain_json_line(e: &Value) -> String {
    let opt = |v: &Value| v.as_f64().map_or("-".into(), |v| format!("{v:.3}"));
    let rank = |r: &Value| r.as_u64().map_or("-".into(), |r| format!("#{}", r + 1));
    let f = &e["feedback"];
    let feedback = match f["count"].as_u64() {
        Some(count) if count > 0 => format!(
            "{count} (mean {:.1}, shift {:+})",
            f["sum"].as_f64().unwrap_or(0.0) / count as f64,
            f["precision_shift"].as_i64().unwrap_or(0)
        ),
        _ => "none".into(),
    };
    // The boosts a hit's score got: for time, a preference, a quantity, an event.
    let time: String = ["time", "preference", "quantity", "event"]
        .iter()
        .filter_map(|name| {
            let b = &e[*name];
            b["boost"].as_f64().map(|boost| {
                format!(
                    " · {name} +{:.0}% ({})",
                    boost * 100.0,
                    b["cue"].as_str().unwrap_or("")
                )
            })
        })
        .collect();
    let sentence = match e["sentence"].as_f64() {
        Some(s) => format!(" · best sentence {s:.3}"),
        None => String::new(),
    };
    format!(
        "vector {} {}{sentence} · lexical {} {} · fused {} · importance {:.2} · {} · retention {:.3} · feedback {feedback}{time}",
        opt(&e["vector"]),
        rank(&e["vector_rank"]),
        opt(&e["lexical"]),
        rank(&e["lexical_rank"]),
        opt(&e["fused"]),
        e["importance"].as_f64().unwrap_or(0.0),
        e["tier"].as_str().unwrap_or(""),
        e["retention"].as_f64().unwrap_or(0.0)
    )
}

/// An item as a JSON object.
pub fn item_json(item: &MemoryItem) -> Value {
    serde_json::to_value(item).expect("items always serialise")
}

/// An item for people: one field per line.
pub fn item_text(item: &MemoryItem) -> String {
    let mut s = format!(
        "#{} {} in {} (count {}, importance {:.2})\n{}\n",
        item.id, item.kind, item.namespace, item.count, item.importance, item.text
    );
    if !item.tags.is_empty() {
        s += &format!("tags: {}\n", item.tags.join(", "));
    }
    if let Some(n) = item.superseded_by {
        s += &format!("superseded by #{n}\n");
    }
    s
}

/// `s` on one line, cut to `max` characters with an ellipsis.
pub fn shorten(s: &str, max: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}
