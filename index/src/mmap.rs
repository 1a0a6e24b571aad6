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

/// A mapped index file.
#[cfg(not(target_family = "wasm"))]
pub(crate) type Mapped = memmap2::Mmap;
/// Anonymous memory an index is copied into.
#[cfg(not(target_family = "wasm"))]
pub(crate) type Anonymous = memmap2::MmapMut;
/// WebAssembly maps nothing: an index file is read into memory.
#[cfg(target_family = "wasm")]
pub(crate) type Mapped = Anonymous;
#[cfg(target_family = "wasm")]
pub(crate) use owned::Anonymous;

/// Maps `file` read-only.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn map_readonly(file: &File) -> std::io::Result<Mapped> {
    // SAFETY: memloop writes index files once (write to a temp file, fsync, rename) and never
    // modifies a file after it is renamed into place, so the bytes behind this mapping do not
    // change for its lifetime unless a foreign process violates that contract (see module docs).
    let map = unsafe { memmap2::Mmap::map(file)? };
    // Graph search touches nodes in an order unrelated to the file layout.
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Random);
    Ok(map)
}

/// `len` bytes of zeroed anonymous memory (at least one byte, as a map cannot be empty),
/// advised to be backed by transparent huge pages where the system offers them.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn anonymous(len: usize) -> std::io::Result<Anonymous> {
    // No `unsafe`: an anonymous map is backed by no file, so nothing outside can change it.
    let map = memmap2::MmapMut::map_anon(len.max(1))?;
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Ok(map)
}

/// Reads `file` whole into memory (WebAssembly has no memory maps).
#[cfg(target_family = "wasm")]
pub(crate) fn map_readonly(file: &File) -> std::io::Result<Mapped> {
    use std::io::Read;
    let len = usize::try_from(file.metadata()?.len())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
    let mut out = Anonymous::zeroed(len);
    let mut file = file;
    file.read_exact(&mut out[..len])?;
    Ok(out)
}

/// `len` bytes of zeroed memory (at least one byte, as with a map).
#[cfg(target_family = "wasm")]
pub(crate) fn anonymous(len: usize) -> std::io::Result<Anonymous> {
    Ok(Anonymous::zeroed(len.max(1)))
}

/// Owned memory aligned as a map's pages would be for the index's sections (64 bytes, the
/// format's alignment), where nothing is mapped.
#[cfg(target_family = "wasm")]
mod owned {
    /// One aligned block.
    #[derive(Clone, Copy)]
    #[repr(C, align(64))]
    struct Block([u8; 64]);

    /// `len` bytes in 64-byte aligned blocks.
    pub(crate) struct Anonymous {
        blocks: Vec<Block>,
        len: usize,
    }

    impl Anonymous {
        /// `len` zeroed bytes.
        pub(super) fn zeroed(len: usize) -> Self {
            Anonymous {
                blocks: vec![Block([0; 64]); len.div_ceil(64)],
                len,
            }
        }
    }

    impl std::ops::Deref for Anonymous {
        type Target = [u8];
        fn deref(&self) -> &[u8] {
            // SAFETY: `blocks` holds `len.div_ceil(64) · 64 >= len` initialised bytes
            // (`Block` is 64 bytes with no padding), borrowed for as long as `self` is.
            unsafe { std::slice::from_raw_parts(self.blocks.as_ptr().cast::<u8>(), self.len) }
        }
    }

    impl std::ops::DerefMut for Anonymous {
        fn deref_mut(&mut self) -> &mut [u8] {
            // SAFETY: as in `deref`, borrowed mutably for as long as `self` is.
            unsafe {
                std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast::<u8>(), self.len)
            }
        }
    }
}
