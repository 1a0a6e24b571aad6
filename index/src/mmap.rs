//! Read-only memory maps of index files.
//!
//! The only `unsafe` of the storage path lives here: `memmap2::Mmap::map` is unsafe because the
//! mapped bytes may change underneath the program if another process modifies the file.
//! memloop never writes into a file that is mapped (a checkpoint writes a new file and renames it
//! over the old one, which leaves existing mappings of the old inode intact). Another program
//! truncating the file while it is mapped makes later reads fault with SIGBUS; the store's process
//! lock cannot stop programs that ignore it, which is documented on `Index::open`.
#![allow(unsafe_code)]

use std::fs::File;

// Sections of a mapped file are read in place as little-endian arrays (FORMAT.md): a
// big-endian machine would misread every one of them.
#[cfg(target_endian = "big")]
compile_error!("memloop's index files are little-endian and read in place: big-endian targets are not supported");

use memmap2::Mmap;

/// Maps `file` read-only.
pub(crate) fn map_readonly(file: &File) -> std::io::Result<Mmap> {
    // SAFETY: memloop writes index files once (write to a temp file, fsync, rename) and never
    // modifies a file after it is renamed into place, so the bytes behind this mapping do not
    // change for its lifetime unless a foreign process violates that contract (see module docs).
    let map = unsafe { Mmap::map(file)? };
    // Graph search touches nodes in an order unrelated to the file layout.
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Random);
    Ok(map)
}

/// `len` bytes of zeroed anonymous memory (at least one byte, as a map cannot be empty),
/// advised to be backed by transparent huge pages where the system offers them.
pub(crate) fn anonymous(len: usize) -> std::io::Result<memmap2::MmapMut> {
    // No `unsafe`: an anonymous map is backed by no file, so nothing outside can change it.
    let map = memmap2::MmapMut::map_anon(len.max(1))?;
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(map)
}
