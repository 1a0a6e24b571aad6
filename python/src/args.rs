//! Arguments from Python: every wrong type, out-of-range number or bad name is an
//! `InvalidArgumentError` naming the argument, never a `TypeError` from the binding layer or a
//! crash.

use memloop::Kind;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString};

use crate::errors::invalid;

/// `obj` as a `T`, or an `InvalidArgumentError` naming the argument.
pub(crate) fn arg<'a, 'py, T>(obj: &'a Bound<'py, PyAny>, name: &str) -> PyResult<T>
where
    T: FromPyObject<'a, 'py>,
    T::Error: Into<PyErr>,
{
    obj.extract::<T>().map_err(|e| {
        let e: PyErr = e.into();
        invalid(format!("{name}: {}", e.value(obj.py())))
    })
}

/// A `str` argument.
pub(crate) fn text(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => s
            .to_cow()
            .map(|c| c.into_owned())
            .map_err(|e| invalid(format!("{name}: {e}"))),
        Err(_) => Err(wrong_type(obj, name, "str")),
    }
}

/// An optional `str` argument (`None` is absent).
pub(crate) fn optional_text(
    obj: Option<&Bound<'_, PyAny>>,
    name: &str,
) -> PyResult<Option<String>> {
    match obj {
        Some(o) if !o.is_none() => text(o, name).map(Some),
        _ => Ok(None),
    }
}

/// An `int` argument that fits `T` (a `bool` is refused: `True` is not a count or an id).
pub(crate) fn int<'a, 'py, T>(obj: &'a Bound<'py, PyAny>, name: &str, range: &str) -> PyResult<T>
where
    T: FromPyObject<'a, 'py>,
{
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<pyo3::types::PyInt>() {
        return Err(wrong_type(obj, name, "int"));
    }
    obj.extract::<T>()
        .map_err(|_| invalid(format!("{name} {obj} is outside {range}")))
}

/// An optional `int` argument.
pub(crate) fn optional_int<'a, 'py, T>(
    obj: Option<&'a Bound<'py, PyAny>>,
    name: &str,
    range: &str,
) -> PyResult<Option<T>>
where
    T: FromPyObject<'a, 'py>,
{
    match obj {
        Some(o) if !o.is_none() => int(o, name, range).map(Some),
        _ => Ok(None),
    }
}

/// A number argument (`int` or `float`, not `bool`).
pub(crate) fn number(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<f64> {
    if obj.is_instance_of::<PyBool>() {
        return Err(wrong_type(obj, name, "a number"));
    }
    obj.extract::<f64>()
        .map_err(|_| wrong_type(obj, name, "a number"))
}

/// A `bool` argument (any object's truth value, as Python's own `if` would take it).
pub(crate) fn flag(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.is_truthy()
}

/// An optional `bool` argument: `None` or left out is false.
pub(crate) fn optional_flag(obj: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    obj.filter(|v| !v.is_none()).map_or(Ok(false), flag)
}

/// An iterable of `str` (a lone `str` is refused: it would be taken letter by letter).
pub(crate) fn texts(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<String>> {
    if obj.is_instance_of::<PyString>() {
        return Err(invalid(format!(
            "{name} is a list of strings, not one string: write [{obj:?}]"
        )));
    }
    let items = obj
        .try_iter()
        .map_err(|_| wrong_type(obj, name, "an iterable of str"))?;
    items
        .map(|item| text(&item?, name))
        .collect::<PyResult<Vec<String>>>()
}

/// An optional iterable of `str`.
pub(crate) fn optional_texts(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Vec<String>> {
    match obj {
        Some(o) if !o.is_none() => texts(o, name),
        _ => Ok(Vec::new()),
    }
}

/// A memory kind by name.
pub(crate) fn kind(name: &str) -> PyResult<Kind> {
    Kind::named(name).map_err(|e| invalid(e.to_string()))
}

fn wrong_type(obj: &Bound<'_, PyAny>, name: &str, expected: &str) -> PyErr {
    let got = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    invalid(format!("{name} must be {expected}, not {got}"))
}
