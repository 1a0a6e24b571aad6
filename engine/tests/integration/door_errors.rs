//! The doors' error classes are generated from the engine's table (`memloop::ERROR_CLASSES`):
//! Python's exceptions (`python/memloop/_errors.py`), Node's (`node/errors.js`,
//! `errors.d.ts`, `index.js`) and the browser's (`wasm/js/memloop.js`, `memloop.d.ts`). Each
//! file keeps its hand-written parts; the part between its `generated from` and `end of
//! generated` lines is the table's. This test fails when a file's part differs from what the
//! table makes; `MEMLOOP_REGENERATE=1` writes it instead.

use std::path::Path;

use memloop::{Builtin, ErrorClass, ERROR_CLASSES};

const HOW: &str = "generated from the engine's error table (engine/src/error_code.rs) by \
     `MEMLOOP_REGENERATE=1 cargo test -p memloop --test integration door_errors`: \
     edit the table, not this";

/// The class a door's class extends: its parent's, or the base.
fn base(c: &ErrorClass) -> &'static str {
    c.parent
        .map(|p| {
            ERROR_CLASSES
                .iter()
                .find(|q| q.code == p)
                .expect("a parent in the table")
                .class
        })
        .unwrap_or("MemloopError")
}

fn python() -> String {
    let mut out = String::new();
    for c in &ERROR_CLASSES {
        let builtin = match c.builtin {
            Some(Builtin::Value) => ", ValueError",
            Some(Builtin::Lookup) => ", LookupError",
            Some(Builtin::Os) => ", OSError",
            None => "",
        };
        out += &format!(
            "\n\nclass {}({}{builtin}):\n    \"\"\"{}\"\"\"\n\n    code = {}\n",
            c.class,
            base(c),
            c.doc,
            c.number
        );
    }
    out += "\n\n__all__ = [\n    \"MemloopError\",\n";
    for c in &ERROR_CLASSES {
        out += &format!("    \"{}\",\n", c.class);
    }
    out += "]\n";
    out
}

/// The table as JavaScript: `[code, class, parent code]` rows, by number.
fn js_table(semi: bool) -> String {
    let mut out = String::from("const TABLE = [\n");
    for c in &ERROR_CLASSES {
        let parent = c.parent.map_or("null".to_string(), |p| format!("'{p}'"));
        out += &format!("  ['{}', '{}', {parent}],\n", c.code, c.class);
    }
    out += if semi { "];\n" } else { "]\n" };
    out
}

fn node_errors() -> String {
    js_table(false)
}

fn node_index() -> String {
    ERROR_CLASSES
        .iter()
        .map(|c| format!("exports.{0} = errors.{0}\n", c.class))
        .collect()
}

fn declarations(declare: &str) -> String {
    ERROR_CLASSES
        .iter()
        .map(|c| {
            format!(
                "/** {} */\nexport {declare}class {} extends {} {{}}\n",
                c.doc,
                c.class,
                base(c)
            )
        })
        .collect()
}

fn browser() -> String {
    let mut out = js_table(false);
    out += "\n/** The error class of each code. */\nconst CLASSES = classesOf(TABLE)\n\n";
    for c in &ERROR_CLASSES {
        out += &format!("export const {} = CLASSES.{}\n", c.class, c.code);
    }
    out
}

/// Checks (or writes) the generated part of `file` (from the repository's root), whose lines
/// start with `comment`.
fn part(file: &str, comment: &str, body: &str, wrong: &mut Vec<String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let begin = format!("{comment} {HOW}\n");
    let end = format!("{comment} end of generated\n");
    let start = text
        .find(&begin)
        .unwrap_or_else(|| panic!("{file}: no line {begin:?}"))
        + begin.len();
    let stop = start
        + text[start..]
            .find(&end)
            .unwrap_or_else(|| panic!("{file}: no line {end:?}"));
    if &text[start..stop] == body {
        return;
    }
    if std::env::var_os("MEMLOOP_REGENERATE").is_some() {
        std::fs::write(&path, format!("{}{body}{}", &text[..start], &text[stop..])).unwrap();
    } else {
        wrong.push(file.to_string());
    }
}

#[test]
fn the_doors_error_classes_are_the_engines_table() {
    let mut wrong = Vec::new();
    part("python/memloop/_errors.py", "#", &python(), &mut wrong);
    part("node/errors.js", "//", &node_errors(), &mut wrong);
    part(
        "node/errors.d.ts",
        "//",
        &declarations("declare "),
        &mut wrong,
    );
    part("node/index.js", "//", &node_index(), &mut wrong);
    part("wasm/js/memloop.js", "//", &browser(), &mut wrong);
    part("wasm/js/memloop.d.ts", "//", &declarations(""), &mut wrong);
    assert!(
        wrong.is_empty(),
        "generated from an older table: {wrong:?}; run MEMLOOP_REGENERATE=1 cargo test -p \
         memloop --test integration door_errors"
    );
}
