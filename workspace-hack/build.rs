// A build script, so that cargo counts the build dependencies below as this crate's too.
fn main() {}
