//! Memories from Python values: `remember`'s keyword arguments, a dict of them
//! (`remember_batch`, an extractor's output), a source, a scope, a time.

use memloop::{items::Source, NewMemory, Scope};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyString};

use crate::args::{self, arg, flag, number, optional_text, optional_texts, text};
use crate::errors::invalid;
use crate::time::millis;

/// `source`: a document name, or `{"document": ..., "span": (start, end)}`.
pub(crate) fn source(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(name) = obj.cast::<PyString>() {
        return Ok(Source {
            document: text(name.as_any(), "source")?,
            span: None,
        });
    }
    if obj.cast::<PyMapping>().is_err() {
        return Err(invalid(
            "source must be a document name or {\"document\": ..., \"span\": (start, end)}",
        ));
    }
    pythonize::depythonize::<Source>(obj).map_err(|e| invalid(format!("source: {e}")))
}

/// An optional time argument (Unix seconds or an aware datetime) in ms.
pub(crate) fn optional_millis(t: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<i64>> {
    t.filter(|t| !t.is_none())
        .map(|t| millis(t, name))
        .transpose()
}

/// A scope from `user`, `agent`, `session` arguments.
pub(crate) fn scope_of(fields: [Option<&Bound<'_, PyAny>>; 3]) -> PyResult<Scope> {
    let [user, agent, session] = fields;
    Ok(Scope {
        user: optional_text(user, "user")?,
        agent: optional_text(agent, "agent")?,
        session: optional_text(session, "session")?,
    })
}

/// A new memory from remember's arguments.
#[allow(clippy::too_many_arguments)]
fn new_memory(
    text_: &Bound<'_, PyAny>,
    kind: Option<&Bound<'_, PyAny>>,
    namespace: Option<&Bound<'_, PyAny>>,
    tags: Option<&Bound<'_, PyAny>>,
    importance: Option<&Bound<'_, PyAny>>,
    concise: Option<&Bound<'_, PyAny>>,
    brief: Option<&Bound<'_, PyAny>>,
    subject: Option<&Bound<'_, PyAny>>,
    source_: Option<&Bound<'_, PyAny>>,
    pinned: Option<&Bound<'_, PyAny>>,
    scope: [Option<&Bound<'_, PyAny>>; 3],
    validity: [Option<&Bound<'_, PyAny>>; 2],
) -> PyResult<NewMemory> {
    let mut m = NewMemory::new(text(text_, "text")?);
    if let Some(kind) = optional_text(kind, "kind")? {
        m = m.kind(args::kind(&kind)?);
    }
    m.namespace = optional_text(namespace, "namespace")?;
    m.tags = optional_texts(tags, "tags")?;
    m.importance = match importance.filter(|i| !i.is_none()) {
        Some(i) => Some(number(i, "importance")? as f32),
        None => None,
    };
    m.concise = optional_text(concise, "concise")?;
    m.brief = optional_text(brief, "brief")?;
    m.subject = optional_text(subject, "subject")?;
    m.source = source_.filter(|s| !s.is_none()).map(source).transpose()?;
    m.pinned = pinned.map(flag).transpose()?.unwrap_or(false);
    let [from, until] = validity;
    m.valid_from = optional_millis(from, "valid_from")?;
    m.valid_until = optional_millis(until, "valid_until")?;
    Ok(m.scope(scope_of(scope)?))
}

/// A memory from `remember`'s text and keyword arguments: the same keys as a
/// `remember_batch` dict.
pub(crate) fn memory_of_fields(
    text_: &Bound<'_, PyAny>,
    fields: Option<&Bound<'_, PyDict>>,
) -> PyResult<NewMemory> {
    let item = match fields {
        Some(f) => f.copy()?,
        None => PyDict::new(text_.py()),
    };
    item.set_item("text", text_)?;
    Ok(memory_of(item.as_any(), &[])?.0)
}

/// A memory from a str, or a dict of `remember`'s keyword arguments plus the keys in `extra`
/// (returned beside it, absent ones as `None`).
pub(crate) fn memory_of<'py>(
    entry: &Bound<'py, PyAny>,
    extra: &[&str],
) -> PyResult<(NewMemory, Vec<Option<Bound<'py, PyAny>>>)> {
    let py = entry.py();
    if entry.cast::<PyString>().is_ok() && extra.is_empty() {
        let m = new_memory(
            entry, None, None, None, None, None, None, None, None, None, [None; 3], [None; 2],
        )?;
        return Ok((m, Vec::new()));
    }
    let map = entry.cast::<PyMapping>().map_err(|_| {
        invalid(if extra.is_empty() {
            "each item must be a str or a dict"
        } else {
            "each item must be a dict"
        })
    })?;
    let field = |name: &str| -> PyResult<Option<Bound<'py, PyAny>>> {
        match map.get_item(name) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => Ok(None),
            Err(e) => Err(e),
        }
    };
    for key in map.keys()? {
        let key: String = arg(&key, "item key")?;
        if !ITEM_FIELDS.contains(&key.as_str()) && !extra.contains(&key.as_str()) {
            let mut known: Vec<&str> = extra.to_vec();
            known.extend(ITEM_FIELDS);
            return Err(invalid(format!(
                "unknown field `{key}` in an item, expected one of {}",
                known.join(", ")
            )));
        }
    }
    let text_ = field("text")?.ok_or_else(|| invalid("an item has no \"text\""))?;
    let m = new_memory(
        &text_,
        field("kind")?.as_ref(),
        field("namespace")?.as_ref(),
        field("tags")?.as_ref(),
        field("importance")?.as_ref(),
        field("concise")?.as_ref(),
        field("brief")?.as_ref(),
        field("subject")?.as_ref(),
        field("source")?.as_ref(),
        field("pinned")?.as_ref(),
        [
            field("user")?.as_ref(),
            field("agent")?.as_ref(),
            field("session")?.as_ref(),
        ],
        [
            field("valid_from")?.as_ref(),
            field("valid_until")?.as_ref(),
        ],
    )?;
    let m = with_triple(
        m,
        [field("head")?, field("relation")?, field("tail")?].map(|f| f.filter(|v| !v.is_none())),
    )?;
    let extra = extra.iter().map(|k| field(k)).collect::<PyResult<_>>()?;
    Ok((m, extra))
}

/// `m` with the triple `head`, `relation`, `tail` (all three or none, as every door takes
/// them).
fn with_triple(m: NewMemory, parts: [Option<Bound<'_, PyAny>>; 3]) -> PyResult<NewMemory> {
    match parts {
        [Some(h), Some(r), Some(t)] => Ok(m.triple(
            &text(&h, "head")?,
            &text(&r, "relation")?,
            &text(&t, "tail")?,
        )),
        [None, None, None] => Ok(m),
        _ => Err(invalid("triple: needs head, relation and tail together")),
    }
}

/// The keys a memory's dict may have.
const ITEM_FIELDS: [&str; 18] = [
    "text",
    "kind",
    "namespace",
    "tags",
    "importance",
    "concise",
    "brief",
    "subject",
    "source",
    "pinned",
    "user",
    "agent",
    "session",
    "valid_from",
    "valid_until",
    "head",
    "relation",
    "tail",
];
