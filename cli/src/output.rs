//! Printing items and hits, as JSON or as text for people.

use memloop::{Explanation, Hit, MemoryItem};
use serde_json::Value;

/// An item as a JSON object.
pub fn item_json(item: &MemoryItem) -> Value {
    serde_json::to_value(item).expect("items always serialise")
}

/// A hit as a flat JSON object (see `Hit`'s serialisation): id, score, rank, kind, text, the
/// explanation and the whole item.
pub fn hit_json(hit: &Hit) -> Value {
    serde_json::to_value(hit).expect("hits always serialise")
}

/// One line per hit: rank, score, id, kind, text (shortened).
pub fn hit_line(hit: &Hit) -> String {
    format!(
        "{:>3}  {:.3}  #{:<6} {:<10} {}",
        hit.rank + 1,
        hit.score,
        hit.item.id,
        hit.item.kind,
        shorten(&hit.item.text, 90)
    )
}

/// An explanation on one line.
pub fn explain_line(e: &Explanation) -> String {
    let opt = |v: Option<f32>| v.map_or("-".into(), |v| format!("{v:.3}"));
    let rank = |r: Option<usize>| r.map_or("-".into(), |r| format!("#{}", r + 1));
    let feedback = e.feedback.map_or("none".into(), |f| {
        format!(
            "{} (mean {:.1}, shift {:+})",
            f.count,
            f.sum as f32 / f.count as f32,
            f.precision_shift
        )
    });
    let time = e.time.as_ref().map_or(String::new(), |t| {
        format!(" · time +{:.0}% ({})", t.boost * 100.0, t.cue)
    });
    format!(
        "vector {} {} · lexical {} {} · fused {} · importance {:.2} · {:?} · retention {:.3} · feedback {feedback}{time}",
        opt(e.vector),
        rank(e.vector_rank),
        opt(e.lexical),
        rank(e.lexical_rank),
        opt(e.fused),
        e.importance,
        e.tier,
        e.retention
    )
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
