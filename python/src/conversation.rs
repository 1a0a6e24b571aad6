//! Conversations from Python: turns given as dicts, and a callable as the extractor hook.

use memloop::{plug::Extracted, plug::Extractor, plug::Turn};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping};

use crate::args::{arg, int, text};
use crate::errors::{callback_failed, invalid};
use crate::items::memory_of;
use crate::time::millis;

/// The keys of a turn.
const TURN_FIELDS: [&str; 3] = ["speaker", "text", "time"];

/// Turns from an iterable of `{"speaker": str, "text": str, "time": seconds or datetime}`.
pub(crate) fn turns_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Turn>> {
    let mut turns = Vec::new();
    let iter = obj
        .try_iter()
        .map_err(|_| invalid("turns must be an iterable of dicts"))?;
    for (i, entry) in iter.enumerate() {
        let entry = entry?;
        let map = entry.cast::<PyMapping>().map_err(|_| {
            invalid(format!(
                "turn {i} must be a dict with {}",
                TURN_FIELDS.join(", ")
            ))
        })?;
        for key in map.keys()? {
            let key: String = arg(&key, "turn key")?;
            if !TURN_FIELDS.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "unknown field `{key}` in turn {i}, expected {}",
                    TURN_FIELDS.join(", ")
                )));
            }
        }
        let field = |name: &str| {
            map.get_item(name)
                .map_err(|_| invalid(format!("turn {i} has no \"{name}\"")))
        };
        turns.push(Turn {
            speaker: text(&field("speaker")?, "speaker")?,
            text: text(&field("text")?, "text")?,
            time: millis(&field("time")?, "time")?,
        });
    }
    Ok(turns)
}

/// `extractor(session, turns) -> iterable of dicts`: each turn a dict `{"speaker", "text",
/// "time"}` (time in ms), each output a dict of `remember`'s keyword arguments plus
/// `"turn"`, the index of the turn it comes from.
pub(crate) struct PyExtractor(pub(crate) Py<PyAny>);

impl Extractor for PyExtractor {
    fn extract(&self, session: &str, turns: &[Turn]) -> memloop::Result<Vec<Extracted>> {
        Python::attach(|py| {
            let given = turns
                .iter()
                .map(|t| {
                    let d = PyDict::new(py);
                    d.set_item("speaker", &t.speaker)?;
                    d.set_item("text", &t.text)?;
                    d.set_item("time", t.time)?;
                    Ok(d)
                })
                .collect::<PyResult<Vec<_>>>()?;
            let result = self.0.call1(py, (session, given))?;
            let mut out = Vec::new();
            let iter = result
                .bind(py)
                .try_iter()
                .map_err(|_| invalid("the extractor must return an iterable of dicts"))?;
            for entry in iter {
                let (memory, extra) = memory_of(&entry?, &["turn"])?;
                let turn = extra[0]
                    .as_ref()
                    .ok_or_else(|| invalid("an extracted item has no \"turn\""))?;
                out.push(Extracted {
                    turn: int(turn, "turn", "0..len(turns)")?,
                    memory,
                });
            }
            Ok(out)
        })
        .map_err(|e| callback_failed("extractor", e))
    }
}
