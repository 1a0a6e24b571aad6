//! The committed header is what cbindgen makes of the current source.
//!
//! `MEMLOOP_BLESS=1 cargo test -p memloop-ffi --test header` rewrites it.

use std::path::Path;

#[test]
fn the_committed_header_is_up_to_date() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/memloop.h");
    if std::env::var_os("MEMLOOP_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "ffi/include/memloop.h is out of date with ffi/src: regenerate it with \
         `MEMLOOP_BLESS=1 cargo test -p memloop-ffi --test header` and commit it"
    );
}
