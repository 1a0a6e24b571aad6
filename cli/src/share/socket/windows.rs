//! Windows: a named pipe, `\\.\pipe\memloop-<hash of the store directory>`, standing where a
//! Unix socket file would. Its first instance is created with `FILE_FLAG_FIRST_PIPE_INSTANCE`
//! (a process that took the name first makes serving fail instead of splitting the clients),
//! every instance with a DACL for this user alone and `PIPE_REJECT_REMOTE_CLIENTS` (nothing
//! from the network); the process at the other end is checked to run as this user through
//! its id (`GetNamedPipeClientProcessId` / `GetNamedPipeServerProcessId`) and its token. The
//! handles are overlapped, so a read or a write waits no longer than its timeout (a blocking
//! pipe has none), and a listener stops when its guard asks.
//!
//! This module's `unsafe` blocks are Win32 calls, each with what makes it sound beside it.
#![allow(unsafe_code)]

use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use windows_sys::Win32::Foundation::{
    ERROR_BROKEN_PIPE, ERROR_FILE_NOT_FOUND, ERROR_IO_PENDING, ERROR_NO_DATA, ERROR_PIPE_BUSY,
    ERROR_PIPE_CONNECTED, ERROR_PIPE_NOT_CONNECTED, GENERIC_READ, GENERIC_WRITE, HANDLE,
    INVALID_HANDLE_VALUE, WAIT_OBJECT_0, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, ReadFile, WriteFile, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED,
    OPEN_EXISTING, PIPE_ACCESS_DUPLEX, SECURITY_IDENTIFICATION, SECURITY_SQOS_PRESENT,
};
use windows_sys::Win32::System::Pipes::{
    ConnectNamedPipe, CreateNamedPipeW, GetNamedPipeClientProcessId, GetNamedPipeServerProcessId,
    WaitNamedPipeW, PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE,
    PIPE_UNLIMITED_INSTANCES, PIPE_WAIT,
};
use windows_sys::Win32::System::Threading::{
    CreateEventW, SetEvent, WaitForMultipleObjects, WaitForSingleObject, INFINITE,
};
use windows_sys::Win32::System::IO::{
    CancelIoEx, GetOverlappedResult, GetOverlappedResultEx, OVERLAPPED,
};

/// Never: a pipe's name is a fixed-length hash, whatever the store's path.
pub fn too_long(_path: &Path) -> bool {
    false
}

/// Each direction's buffer in the pipe: a reply line larger than it is written as the reader
/// drains it.
const BUFFER_BYTES: u32 = 64 * 1024;

/// How long a client waits for a free instance when every one is taken (between a connection
/// and the next instance's creation), per try.
const BUSY_WAIT_MS: u32 = 1000;

/// The pipe name standing for the socket at `path` (the store directory's `memloop.sock`):
/// a hash of the directory's canonical path, so every spelling of it names one pipe.
fn pipe_name(path: &Path) -> io::Result<Vec<u16>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let canonical = dir.canonicalize()?;
    let mut hash = Sha256::new();
    for unit in canonical.as_os_str().encode_wide() {
        hash.update(unit.to_le_bytes());
    }
    if let Some(file) = path.file_name() {
        hash.update([0, 0]);
        for unit in file.encode_wide() {
            hash.update(unit.to_le_bytes());
        }
    }
    let digest = hash.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(r"\\.\pipe\memloop-{hex}")
        .encode_utf16()
        .chain(Some(0))
        .collect())
}

/// A manual-reset event, unsignalled.
fn event() -> io::Result<OwnedHandle> {
    // SAFETY: no attributes and no name; the handle returned is owned by the OwnedHandle.
    let handle = unsafe { CreateEventW(std::ptr::null(), 1, 0, std::ptr::null()) };
    if handle.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `handle` is a fresh event handle nothing else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

fn raw(handle: &OwnedHandle) -> HANDLE {
    handle.as_raw_handle()
}

/// Runs one overlapped operation on `handle` that `start` begins with the OVERLAPPED it is
/// given, waiting for it at most `timeout` (for ever when `None`); the bytes it moved.
///
/// Whatever happens, the operation has ended when this returns (a timed-out one is cancelled
/// and waited for), so the buffer `start` lent it is no longer written or read.
fn overlapped(
    handle: HANDLE,
    timeout: Option<Duration>,
    start: impl FnOnce(*mut OVERLAPPED) -> i32,
) -> io::Result<u32> {
    let done = event()?;
    // SAFETY: OVERLAPPED is integers and pointers, for which all zeros is valid.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    ov.hEvent = raw(&done);
    if start(&mut ov) == 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(ERROR_IO_PENDING as i32) {
            return Err(e);
        }
    }
    let ms = timeout.map_or(INFINITE, |t| {
        u32::try_from(t.as_millis()).unwrap_or(INFINITE - 1).max(1)
    });
    let mut moved = 0u32;
    // SAFETY: `ov` is the live OVERLAPPED of the operation on `handle`; it stays in place
    // until the operation has ended (here, or after the cancel below).
    if unsafe { GetOverlappedResultEx(handle, &ov, &mut moved, ms, 0) } != 0 {
        return Ok(moved);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(WAIT_TIMEOUT as i32) {
        return Err(e);
    }
    // SAFETY: as above; after the cancel, waiting for the result ends the operation (it
    // completed meanwhile, or was aborted).
    let finished = unsafe {
        CancelIoEx(handle, &ov);
        GetOverlappedResult(handle, &ov, &mut moved, 1)
    };
    if finished != 0 {
        return Ok(moved);
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        "the pipe's other end did not answer in time",
    ))
}

/// Whether `e` says the pipe's other end has closed (or is closing) its handle.
fn other_end_closed(e: &io::Error) -> bool {
    [ERROR_BROKEN_PIPE, ERROR_PIPE_NOT_CONNECTED, ERROR_NO_DATA]
        .iter()
        .any(|&c| e.raw_os_error() == Some(c as i32))
}

/// One end of a connection. Clones share the handle and its timeouts, as a socket's do.
#[derive(Debug, Clone)]
pub struct Stream {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    handle: OwnedHandle,
    /// True for the serving process's end (its peer is a client).
    server_end: bool,
    read_timeout: Mutex<Option<Duration>>,
    write_timeout: Mutex<Option<Duration>>,
}

impl Stream {
    fn new(handle: OwnedHandle, server_end: bool) -> Stream {
        Stream {
            inner: Arc::new(Inner {
                handle,
                server_end,
                read_timeout: Mutex::new(None),
                write_timeout: Mutex::new(None),
            }),
        }
    }

    /// Another handle on the same connection.
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(self.clone())
    }

    /// How long a read may wait (every clone's).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        *self.inner.read_timeout.lock() = timeout;
        Ok(())
    }

    /// How long a write may wait for the other end to drain the pipe (every clone's).
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        *self.inner.write_timeout.lock() = timeout;
        Ok(())
    }

    fn handle(&self) -> HANDLE {
        raw(&self.inner.handle)
    }
}

impl io::Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        let timeout = *self.inner.read_timeout.lock();
        let ptr = buf.as_mut_ptr();
        let handle = self.handle();
        // SAFETY: `buf` is writable for `len` bytes and outlives the operation, which
        // `overlapped` ends before returning.
        let read = overlapped(handle, timeout, |ov| unsafe {
            ReadFile(handle, ptr, len, std::ptr::null_mut(), ov)
        });
        match read {
            Ok(n) => Ok(n as usize),
            // The other end closed: the end of the stream, as a socket reads it.
            Err(e) if other_end_closed(&e) => Ok(0),
            Err(e) => Err(e),
        }
    }
}

impl io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        let timeout = *self.inner.write_timeout.lock();
        let ptr = buf.as_ptr();
        let handle = self.handle();
        // SAFETY: `buf` is readable for `len` bytes and outlives the operation, which
        // `overlapped` ends before returning.
        let wrote = overlapped(handle, timeout, |ov| unsafe {
            WriteFile(handle, ptr, len, std::ptr::null_mut(), ov)
        });
        match wrote {
            Ok(n) => Ok(n as usize),
            Err(e) if other_end_closed(&e) => Err(io::Error::new(io::ErrorKind::BrokenPipe, e)),
            Err(e) => Err(e),
        }
    }

    /// Nothing to do: a completed write is in the pipe (`FlushFileBuffers` would wait for the
    /// other end to read it all).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Connects to the pipe standing for the socket at `path`.
///
/// # Errors
/// [`io::ErrorKind::NotFound`] when nothing serves it.
pub fn connect(path: &Path) -> io::Result<Stream> {
    let name = match pipe_name(path) {
        Ok(name) => name,
        Err(e) => return Err(io::Error::new(io::ErrorKind::NotFound, e)),
    };
    let mut tries = 0;
    loop {
        // SAFETY: `name` is NUL-terminated; the handle returned is owned below. The security
        // quality of service lets the server identify this process, not act as it.
        let handle = unsafe {
            CreateFileW(
                name.as_ptr(),
                GENERIC_READ | GENERIC_WRITE,
                0,
                std::ptr::null(),
                OPEN_EXISTING,
                FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION,
                std::ptr::null_mut(),
            )
        };
        if handle != INVALID_HANDLE_VALUE {
            // SAFETY: a fresh handle nothing else owns.
            return Ok(Stream::new(
                unsafe { OwnedHandle::from_raw_handle(handle) },
                false,
            ));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(c) if c == ERROR_PIPE_BUSY as i32 && tries < 5 => {
                tries += 1;
                // SAFETY: `name` is NUL-terminated.
                unsafe { WaitNamedPipeW(name.as_ptr(), BUSY_WAIT_MS) };
            }
            Some(c) if c == ERROR_FILE_NOT_FOUND as i32 => {
                return Err(io::Error::new(io::ErrorKind::NotFound, e))
            }
            _ => return Err(e),
        }
    }
}

/// Creates one instance of pipe `name` for this user alone, local clients only, overlapped.
fn instance(name: &[u16], first: bool) -> io::Result<OwnedHandle> {
    let open = PIPE_ACCESS_DUPLEX
        | FILE_FLAG_OVERLAPPED
        | if first {
            FILE_FLAG_FIRST_PIPE_INSTANCE
        } else {
            0
        };
    memloop::privacy::with_private_security(|attributes| {
        // SAFETY: `name` is NUL-terminated; `attributes` is valid for the call; the handle
        // returned is owned below.
        let handle = unsafe {
            CreateNamedPipeW(
                name.as_ptr(),
                open,
                PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                PIPE_UNLIMITED_INSTANCES,
                BUFFER_BYTES,
                BUFFER_BYTES,
                0,
                attributes,
            )
        };
        if handle == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh handle nothing else owns.
        Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
    })
}

/// Serves the pipe standing for the socket at `path`.
///
/// # Errors
/// [`io::ErrorKind::PermissionDenied`] when a pipe of that name exists already (another
/// process took it: it could be another user's, so nothing is served).
pub fn bind(path: &Path) -> io::Result<Listener> {
    let name = pipe_name(path)?;
    let first = instance(&name, true).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("another process has taken the store's pipe name ({e})"),
        )
    })?;
    Ok(Listener {
        name,
        next: Mutex::new(Some(first)),
        stop: Arc::new(event()?),
    })
}

/// `Ok(None)` when the process at the other end of `stream` runs as this user; else who it
/// runs as (for the message), or the error that kept it from being known.
pub fn other_user(stream: &Stream) -> io::Result<Option<String>> {
    let mut pid = 0u32;
    // SAFETY: the handle is an open pipe end; `pid` is written on success.
    let ok = unsafe {
        if stream.inner.server_end {
            GetNamedPipeClientProcessId(stream.handle(), &mut pid)
        } else {
            GetNamedPipeServerProcessId(stream.handle(), &mut pid)
        }
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    memloop::privacy::other_user_of_process(pid)
        .map(|other| other.map(|who| format!("{who} (process {pid}), not by you")))
}

/// A listening pipe: one instance waits for a client at a time, the next made when it
/// connects. It stops (its instance closed, freeing the name) when its [`Stopper`] drops.
#[derive(Debug)]
pub struct Listener {
    name: Vec<u16>,
    /// The instance the next client connects to.
    next: Mutex<Option<OwnedHandle>>,
    /// Signalled to stop listening.
    stop: Arc<OwnedHandle>,
}

/// Stops its listener when dropped (even while it waits for a client).
#[derive(Debug)]
pub struct Stopper(Arc<OwnedHandle>);

impl Drop for Stopper {
    fn drop(&mut self) {
        // SAFETY: the event handle lives as long as this Arc does.
        unsafe { SetEvent(raw(&self.0)) };
    }
}

/// What stops `listener` when dropped.
pub fn stopper(listener: &Listener) -> Stopper {
    Stopper(listener.stop.clone())
}

impl Listener {
    /// The connections, one after another, until the listener is stopped.
    pub fn incoming(&self) -> impl Iterator<Item = io::Result<Stream>> + '_ {
        std::iter::from_fn(move || self.accept())
    }

    /// Waits for the next client; `None` once stopped.
    fn accept(&self) -> Option<io::Result<Stream>> {
        // SAFETY: the event handle is open while `self` lives.
        if unsafe { WaitForSingleObject(raw(&self.stop), 0) } == WAIT_OBJECT_0 {
            self.next.lock().take();
            return None;
        }
        let pipe = match self.next.lock().take() {
            Some(pipe) => pipe,
            None => match instance(&self.name, false) {
                Ok(pipe) => pipe,
                Err(e) => {
                    // Nothing to wait on: pause so a failing creation does not spin.
                    std::thread::sleep(Duration::from_millis(100));
                    return Some(Err(e));
                }
            },
        };
        let connected = match self.connect(&pipe) {
            Ok(connected) => connected,
            Err(e) => return Some(Err(e)),
        };
        if !connected {
            return None;
        }
        // The next client's instance exists before this one is handed on.
        *self.next.lock() = instance(&self.name, false).ok();
        Some(Ok(Stream::new(pipe, true)))
    }

    /// Waits on `pipe` for a client: `true` when one connected, `false` when stopped first.
    fn connect(&self, pipe: &OwnedHandle) -> io::Result<bool> {
        let done = event()?;
        // SAFETY: OVERLAPPED is integers and pointers, for which all zeros is valid.
        let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
        ov.hEvent = raw(&done);
        // SAFETY: `ov` stays in place until the operation ends, below.
        if unsafe { ConnectNamedPipe(raw(pipe), &mut ov) } != 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // A client connected between the creation and this call.
            Some(c) if c == ERROR_PIPE_CONNECTED as i32 => return Ok(true),
            Some(c) if c == ERROR_IO_PENDING as i32 => {}
            _ => return Err(e),
        }
        let events = [raw(&done), raw(&self.stop)];
        // SAFETY: both handles are open events for the whole wait.
        let woke = unsafe { WaitForMultipleObjects(2, events.as_ptr(), 0, INFINITE) };
        let mut moved = 0u32;
        if woke == WAIT_OBJECT_0 {
            // SAFETY: the operation has completed; `ov` is its OVERLAPPED.
            if unsafe { GetOverlappedResult(raw(pipe), &ov, &mut moved, 0) } != 0 {
                return Ok(true);
            }
            return Err(io::Error::last_os_error());
        }
        // Stopped (or the wait failed): end the pending connect before `ov` goes.
        // SAFETY: `ov` is the pending operation's OVERLAPPED; waiting for its result after
        // the cancel ends it.
        let connected = unsafe {
            CancelIoEx(raw(pipe), &ov);
            GetOverlappedResult(raw(pipe), &ov, &mut moved, 1) != 0
        };
        Ok(connected && woke == WAIT_OBJECT_0)
    }
}

/// A connected pair on a pipe of its own, for tests.
#[cfg(test)]
pub fn pair() -> io::Result<(Stream, Stream)> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let dir = std::env::temp_dir();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("pair-{}-{n}.sock", std::process::id()));
    let listener = bind(&path)?;
    let client = connect(&path)?;
    let server = listener.incoming().next().expect("a connection")?;
    Ok((client, server))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_pipe_carries_bytes_both_ways_and_its_peer_is_this_user() {
        let (mut client, mut server) = pair().unwrap();
        client.write_all(b"hello\n").unwrap();
        let mut got = [0u8; 6];
        server.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello\n");
        server.write_all(b"back").unwrap();
        let mut got = [0u8; 4];
        client.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"back");
        assert_eq!(other_user(&client).unwrap(), None);
        assert_eq!(other_user(&server).unwrap(), None);
        drop(client);
        assert_eq!(server.read(&mut got).unwrap(), 0, "the end of the stream");
    }

    #[test]
    fn a_read_waits_no_longer_than_its_timeout() {
        let (client, _server) = pair().unwrap();
        let mut reader = client.try_clone().unwrap();
        // Set on one clone, it holds for the other, as a socket's timeout does.
        client
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let started = std::time::Instant::now();
        let e = reader.read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_second_server_on_one_name_is_refused_and_a_stopped_one_frees_it() {
        let dir = std::env::temp_dir();
        let path = dir.join(format!("second-{}.sock", std::process::id()));
        let first = bind(&path).unwrap();
        if under_wine() {
            // Wine 8 creates a second instance instead (it ignores the flag); Windows refuses.
            eprintln!("under Wine: FILE_FLAG_FIRST_PIPE_INSTANCE is not enforced, not checked");
        } else {
            let e = bind(&path).unwrap_err();
            assert!(e.to_string().contains("taken the store's pipe name"), "{e}");
        }
        let stopper = stopper(&first);
        let waiting = std::thread::spawn(move || first.incoming().count());
        std::thread::sleep(Duration::from_millis(100));
        drop(stopper);
        assert_eq!(waiting.join().unwrap(), 0, "stopped with no connection");
        bind(&path).expect("the name is free once the listener stopped");
    }

    /// Whether this runs under Wine (its ntdll exports `wine_get_version`).
    fn under_wine() -> bool {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
        let ntdll: Vec<u16> = "ntdll.dll".encode_utf16().chain(Some(0)).collect();
        // SAFETY: both names are NUL-terminated; ntdll is loaded in every process and its
        // handle needs no release.
        unsafe {
            let module = GetModuleHandleW(ntdll.as_ptr());
            !module.is_null()
                && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
        }
    }

    #[test]
    fn nothing_served_reads_as_not_found() {
        let path = std::env::temp_dir().join("never-served.sock");
        let e = connect(&path).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
    }
}
