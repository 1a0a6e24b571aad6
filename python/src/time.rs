//! Times from Python: Unix seconds (int or float) or a timezone-aware `datetime`, as
//! milliseconds since the Unix epoch.

use pyo3::prelude::*;
use pyo3::types::PyBool;

use crate::errors::invalid;

/// The milliseconds of `t`, checked to be finite and within what a timestamp holds.
pub(crate) fn millis(t: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    let py = t.py();
    let datetime = py.import("datetime")?.getattr("datetime")?;
    let seconds: f64 = if t.is_instance(&datetime)? {
        if t.getattr("tzinfo")?.is_none() {
            return Err(invalid(format!(
                "{name} needs a timezone-aware datetime (give tzinfo, e.g. datetime.timezone.utc)"
            )));
        }
        t.call_method0("timestamp")?.extract()?
    } else if t.is_instance_of::<PyBool>() {
        return Err(invalid(format!(
            "{name} must be Unix seconds or a datetime, not {t}"
        )));
    } else if let Ok(s) = t.extract::<i64>() {
        return s
            .checked_mul(1000)
            .filter(|ms| ms.abs() < MAX_MS)
            .ok_or_else(|| invalid(format!("{name} {s} is outside the representable times")));
    } else if let Ok(s) = t.extract::<f64>() {
        s
    } else {
        return Err(invalid(format!(
            "{name} must be Unix seconds or a datetime, not {}",
            t.get_type().name()?
        )));
    };
    let ms = (seconds * 1000.0).round();
    if !ms.is_finite() || ms.abs() >= MAX_MS as f64 {
        return Err(invalid(format!(
            "{name} {seconds} is outside the representable times"
        )));
    }
    Ok(ms as i64)
}

/// About 292,000 years each side of 1970: beyond it a time in ms would not survive arithmetic.
const MAX_MS: i64 = i64::MAX / 1000;
