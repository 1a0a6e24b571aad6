//! Streaming writer for a new index file: header space first, sections with running checksums,
//! the header last, then fsync, rename over the destination and fsync of the directory.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;
use zerocopy::IntoBytes;

use super::header::{Header, SectionEntry, CHECKSUM_XXH3, FORMAT_VERSION, HEADER_LEN, MAGIC};
use super::{section_seed, Section, ALIGN};
use crate::encoding::VectorEncoding;
use crate::error::{IndexError, Result};

/// Where a writer's bytes go.
enum Sink {
    File(BufWriter<File>),
    Memory(Vec<u8>),
}

/// Writes sections in order into `<dest>.tmp`, then publishes the file atomically; or builds
/// the same bytes in memory ([`SectionWriter::in_memory`]).
pub(crate) struct SectionWriter {
    dest: PathBuf,
    tmp: PathBuf,
    out: Sink,
    pos: u64,
    entries: [SectionEntry; 8],
    current: Option<(usize, u64, Xxh3)>,
    /// Removes the temporary file unless it was published: a failed save (a full disk) leaves
    /// nothing behind.
    unpublished: RemoveOnDrop,
}

/// Deletes a path when dropped, unless disarmed.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl SectionWriter {
    pub(crate) fn create(
        dest: &Path,
        open: impl FnOnce(&Path) -> std::io::Result<File>,
    ) -> Result<Self> {
        let mut name = dest.file_name().unwrap_or_default().to_os_string();
        name.push(".tmp");
        let tmp = dest.with_file_name(name);
        let file =
            open(&tmp).map_err(|e| IndexError::io(&tmp, "create temporary index file", e))?;
        let mut w = SectionWriter {
            dest: dest.to_path_buf(),
            tmp: tmp.clone(),
            out: Sink::File(BufWriter::with_capacity(1 << 20, file)),
            pos: 0,
            entries: Default::default(),
            current: None,
            unpublished: RemoveOnDrop(Some(tmp.clone())),
        };
        w.raw(&[0u8; HEADER_LEN])?;
        Ok(w)
    }

    /// A writer that builds the file in memory ([`SectionWriter::finish_in_memory`]).
    pub(crate) fn in_memory() -> Self {
        let mut w = SectionWriter {
            dest: PathBuf::new(),
            tmp: PathBuf::new(),
            out: Sink::Memory(Vec::new()),
            pos: 0,
            entries: Default::default(),
            current: None,
            unpublished: RemoveOnDrop(None),
        };
        if let Sink::Memory(v) = &mut w.out {
            v.extend_from_slice(&[0u8; HEADER_LEN]);
        }
        w.pos = HEADER_LEN as u64;
        w
    }

    fn raw(&mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.out {
            Sink::File(f) => f
                .write_all(bytes)
                .map_err(|e| IndexError::io(&self.tmp, "write index file", e))?,
            Sink::Memory(v) => v.extend_from_slice(bytes),
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Pads to the section alignment and starts `section`.
    pub(crate) fn begin(&mut self, section: Section) -> Result<()> {
        let pad = (ALIGN - self.pos % ALIGN) % ALIGN;
        self.raw(&[0u8; ALIGN as usize][..pad as usize])?;
        let idx = section as usize;
        self.current = Some((idx, self.pos, Xxh3::with_seed(section_seed(idx))));
        Ok(())
    }

    /// Appends bytes to the current section.
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if let Some((_, _, h)) = self.current.as_mut() {
            h.update(bytes);
        }
        self.raw(bytes)
    }

    /// Ends the current section, recording its place and checksum.
    pub(crate) fn end(&mut self) {
        if let Some((idx, start, h)) = self.current.take() {
            self.entries[idx] = SectionEntry {
                offset: start.into(),
                length: (self.pos - start).into(),
                checksum: h.digest().into(),
            };
        }
    }

    /// Completes `header`: magic, version, the section table and checksums.
    fn complete(&self, header: &mut Header) {
        header.magic = MAGIC;
        header.format_version = FORMAT_VERSION.into();
        header.checksum_algo = CHECKSUM_XXH3.into();
        let encoding = VectorEncoding::from_tag(header.vector_encoding.get()).unwrap_or_default();
        header.section_count = (Section::present(encoding).len() as u32).into();
        header.sections = self.entries;
        header.reserved = [0; 196];
        header.header_checksum = header.compute_checksum().into();
    }

    /// The file built by a writer from [`SectionWriter::in_memory`], with its header.
    pub(crate) fn finish_in_memory(self, mut header: Header) -> Vec<u8> {
        self.complete(&mut header);
        match self.out {
            Sink::Memory(mut v) => {
                v[..HEADER_LEN].copy_from_slice(header.as_bytes());
                v
            }
            Sink::File(_) => unreachable!("a file writer is finished with `finish`"),
        }
    }

    /// Writes the header (with section table and checksums), fsyncs, renames over the
    /// destination and fsyncs the directory.
    pub(crate) fn finish(mut self, mut header: Header) -> Result<()> {
        self.complete(&mut header);
        let Sink::File(out) = self.out else {
            unreachable!("an in-memory writer is finished with `finish_in_memory`");
        };
        let tmp = self.tmp.clone();
        let io = |op: &'static str| {
            let tmp = tmp.clone();
            move |e| IndexError::io(&tmp, op, e)
        };
        let mut out = out;
        out.flush().map_err(io("write index file"))?;
        let mut file = out
            .into_inner()
            .map_err(|e| IndexError::io(&self.tmp, "flush index file", e.into_error()))?;
        file.seek(SeekFrom::Start(0))
            .map_err(io("seek index file"))?;
        file.write_all(header.as_bytes())
            .map_err(io("write index header"))?;
        file.sync_all().map_err(io("fsync index file"))?;
        // Closed before the rename (Windows refuses to rename an open file). A lint attribute
        // because the browser's target has no files, so its `File` has nothing to drop.
        #[cfg_attr(target_arch = "wasm32", allow(clippy::drop_non_drop))]
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)
            .map_err(|e| IndexError::io(&self.dest, "rename index file into place", e))?;
        self.unpublished.0 = None;
        sync_dir(&self.dest)
    }
}

/// Creates `path` afresh for writing; on Unix readable by its owner alone (0600): only its
/// owner reads an index, whose vectors say what the memories said.
pub(crate) fn create_private(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    crate::platform::owner_only(&mut options);
    options.open(path)
}

/// Fsyncs the directory holding `path`, so a rename survives power loss.
pub(crate) fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    crate::platform::sync_dir(dir).map_err(|(op, e)| IndexError::io(dir, op, e))
}
