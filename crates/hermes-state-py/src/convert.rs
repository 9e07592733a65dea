//! Python values to the library's JSON arguments and back.
//!
//! The library's by-name calls (`hermes_state::by_name`) take the original's
//! keyword arguments as JSON values, so this is the one place a Python
//! value is read. The rules follow what the original's own layers accept:
//! plain values as `sqlite3` binds them, containers as `json.dumps` writes
//! them (the original stores every dict or list argument through it).
//! What has no JSON value is refused with the exception Python would raise
//! there, never dropped or guessed (`docs/PYTHON.md`, "Arguments").

use pyo3::exceptions::{PyOverflowError, PyRecursionError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// How deep a container argument may nest. Deeper values are refused with
/// `RecursionError` (as `json.dumps` refuses a value deeper than Python's
/// recursion limit) instead of risking the thread's stack in the recursive
/// conversions and the library's encoder; it also ends a self-containing
/// list, which `json.dumps` reports as a circular reference.
pub const MAX_DEPTH: usize = 200;

/// A call's keyword arguments: the names the caller gave, in order.
pub fn kwargs_to_json(kwargs: &Bound<'_, PyDict>) -> PyResult<Map<String, Value>> {
    let mut map = Map::with_capacity(kwargs.len());
    for (key, value) in kwargs.iter() {
        let name = key
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("keywords must be strings"))?
            .to_string_lossy()
            .into_owned();
        // (A keyword is an identifier: it never holds a lone surrogate.)
        map.insert(name, to_json(&value, 0)?);
    }
    Ok(map)
}

/// One Python value as JSON.
///
/// `bool` before `int` (a `bool` is an `int` in Python); subclasses of
/// `str`, `int` and `float` (a `str` enum, an `IntEnum`) count as their base
/// type, as `sqlite3` and `json` treat them. Text with lone surrogates is
/// scrubbed to U+FFFD, as the original scrubs what it stores (`api.md`
/// §0.4).
pub fn to_json(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Value::String(scrubbed(text)?));
    }
    if let Ok(integer) = value.cast::<PyInt>() {
        return integer_to_json(integer);
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return float_to_json(float.value());
    }
    if depth >= MAX_DEPTH {
        return Err(PyRecursionError::new_err(format!(
            "an argument nests containers more than {MAX_DEPTH} deep (or contains itself)"
        )));
    }
    if let Ok(list) = value.cast::<PyList>() {
        return array(list.iter(), depth);
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return array(tuple.iter(), depth);
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            map.insert(dict_key(&key)?, to_json(&item, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    Err(PyTypeError::new_err(format!(
        "Object of type {} is not JSON serializable",
        type_name(value)
    )))
}

/// A `str` as Rust text, each lone surrogate (U+D800–U+DFFF, which UTF-8
/// cannot hold) replaced by one U+FFFD, as the original scrubs the text it
/// stores (`api.md` §0.4). Only such text takes the slow path: its code
/// points, read as UTF-32 with the surrogates passed through.
fn scrubbed(text: &Bound<'_, PyString>) -> PyResult<String> {
    if let Ok(valid) = text.to_str() {
        return Ok(valid.to_owned());
    }
    let units = text.call_method1("encode", ("utf-32-le", "surrogatepass"))?;
    let bytes = units.cast::<pyo3::types::PyBytes>()?.as_bytes();
    Ok(bytes
        .chunks_exact(4)
        .map(|unit| {
            let code = u32::from_le_bytes([unit[0], unit[1], unit[2], unit[3]]);
            char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
        })
        .collect())
}

/// A list or tuple as a JSON array.
fn array<'py>(items: impl Iterator<Item = Bound<'py, PyAny>>, depth: usize) -> PyResult<Value> {
    items
        .map(|item| to_json(&item, depth + 1))
        .collect::<PyResult<Vec<_>>>()
        .map(Value::Array)
}

/// An `int` as JSON: any value of `i64` or `u64`. Larger ones are refused
/// with `OverflowError`, as `sqlite3` refuses to bind them (JSON text could
/// hold them, the library's values cannot).
fn integer_to_json(integer: &Bound<'_, PyInt>) -> PyResult<Value> {
    if let Ok(signed) = integer.extract::<i64>() {
        return Ok(Value::Number(signed.into()));
    }
    if let Ok(unsigned) = integer.extract::<u64>() {
        return Ok(Value::Number(unsigned.into()));
    }
    Err(PyOverflowError::new_err(
        "Python int too large to convert to SQLite INTEGER",
    ))
}

/// A `float` as JSON. NaN and the infinities have no JSON value: refused
/// with `ValueError` (`json.dumps(..., allow_nan=False)`'s refusal), where
/// the original would bind NaN as NULL or write `NaN` into JSON text.
fn float_to_json(float: f64) -> PyResult<Value> {
    Number::from_f64(float).map(Value::Number).ok_or_else(|| {
        let repr = if float.is_nan() {
            "nan"
        } else if float > 0.0 {
            "inf"
        } else {
            "-inf"
        };
        PyValueError::new_err(format!(
            "Out of range float values are not JSON compliant: {repr}"
        ))
    })
}

/// A dict key as `json.dumps` writes it: text as is, `True`/`False`/`None`
/// as `true`/`false`/`null`, numbers as their JSON text.
fn dict_key(key: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = key.cast::<PyString>() {
        return scrubbed(text);
    }
    if key.is_none() {
        return Ok("null".to_owned());
    }
    if let Ok(flag) = key.cast::<PyBool>() {
        return Ok(if flag.is_true() { "true" } else { "false" }.to_owned());
    }
    if key.cast::<PyInt>().is_ok() || key.cast::<PyFloat>().is_ok() {
        return Ok(key.repr()?.to_string_lossy().into_owned());
    }
    Err(PyTypeError::new_err(format!(
        "keys must be str, int, float, bool or None, not {}",
        type_name(key)
    )))
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

/// A JSON answer as Python: integers stay `int`, other numbers are `float`,
/// objects are `dict`s in the library's key order, arrays are `list`s.
pub fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => number_to_python(py, number)?,
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (key, item) in map {
                dict.set_item(key, to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

fn number_to_python<'py>(py: Python<'py>, number: &Number) -> PyResult<Bound<'py, PyAny>> {
    if let Some(signed) = number.as_i64() {
        return Ok(signed.into_pyobject(py)?.into_any());
    }
    if let Some(unsigned) = number.as_u64() {
        return Ok(unsigned.into_pyobject(py)?.into_any());
    }
    // Neither integer form: serde_json holds it as an f64.
    let float = number.as_f64().unwrap_or(f64::NAN);
    Ok(PyFloat::new(py, float).into_any())
}
