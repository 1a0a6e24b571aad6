//! Windows: access is decided by ACLs, not mode bits. A store directory is created with a
//! protected ACL that lets only this user in (its files inherit it); a directory or key file is
//! checked through its owner SID and the allow entries of its ACL; links are opened as
//! themselves (`FILE_FLAG_OPEN_REPARSE_POINT`) and refused; a file that is mapped cannot be
//! renamed over (the index is written beside it instead, see `memory/index_file.rs`).
//! `File::sync_all` is `FlushFileBuffers`; NTFS journals a rename, so there is no directory to
//! flush.
//!
//! The engine's only `unsafe` code: the Win32 security calls, each block with what makes it
//! sound beside it.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::fs::{File, Metadata};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::FileExt;
use std::os::windows::io::FromRawHandle;
use std::path::Path;

use super::Create;
use windows_sys::Win32::Foundation::{
    CloseHandle, LocalFree, ERROR_SUCCESS, GENERIC_ALL, GENERIC_READ, GENERIC_WRITE, HANDLE,
    INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT};
use windows_sys::Win32::Security::{
    AclSizeInformation, AddAccessAllowedAceEx, GetAce, GetAclInformation, GetLengthSid,
    GetTokenInformation, InitializeAcl, InitializeSecurityDescriptor, IsWellKnownSid,
    SetSecurityDescriptorControl, SetSecurityDescriptorDacl, TokenUser,
    WinBuiltinAdministratorsSid, WinLocalSystemSid, ACCESS_ALLOWED_ACE, ACE_HEADER, ACL,
    ACL_REVISION, ACL_SIZE_INFORMATION, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION,
    INHERIT_ONLY_ACE, OBJECT_INHERIT_ACE, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID,
    SECURITY_ATTRIBUTES, SECURITY_DESCRIPTOR, SE_DACL_PROTECTED, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateDirectoryW, CreateFileW, CREATE_ALWAYS, CREATE_NEW, DELETE, FILE_ALL_ACCESS,
    FILE_APPEND_DATA, FILE_ATTRIBUTE_NORMAL, FILE_DELETE_CHILD, FILE_FLAG_OPEN_REPARSE_POINT,
    FILE_READ_DATA, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_WRITE_DATA,
    OPEN_ALWAYS, WRITE_DAC, WRITE_OWNER,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// Windows refuses to rename over (or delete) a file while a view of it is mapped.
pub(crate) const RENAME_REPLACES_MAPPED: bool = false;

/// `ACCESS_ALLOWED_ACE_TYPE`: the only kind of entry that grants anything.
const ALLOWED: u8 = 0;
/// Rights that let a holder change what a directory holds or who may.
const WRITE_RIGHTS: u32 = FILE_WRITE_DATA
    | FILE_APPEND_DATA
    | FILE_DELETE_CHILD
    | DELETE
    | WRITE_DAC
    | WRITE_OWNER
    | GENERIC_WRITE
    | GENERIC_ALL;
/// Rights that let a holder read a file's bytes or give itself the right to.
const READ_RIGHTS: u32 = FILE_READ_DATA | GENERIC_READ | GENERIC_ALL | WRITE_DAC | WRITE_OWNER;

/// `path` as a NUL-terminated UTF-16 string (non-ASCII names included).
fn wide(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain(Some(0)).collect()
}

/// A security descriptor the system allocated, freed on drop.
struct Descriptor(PSECURITY_DESCRIPTOR);

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: the pointer came from GetNamedSecurityInfoW, which hands its caller a
        // LocalAlloc'd descriptor to free once; it is freed here only.
        unsafe { LocalFree(self.0) };
    }
}

/// The current process's user SID, as bytes.
fn my_sid() -> io::Result<Vec<u8>> {
    // SAFETY: GetCurrentProcess returns a pseudo handle, valid for the whole process.
    unsafe { process_sid(GetCurrentProcess()) }
}

/// The user SID of the process `pid` runs as, as bytes.
fn sid_of_process(pid: u32) -> io::Result<Vec<u8>> {
    // SAFETY: OpenProcess returns a handle this function owns (closed below) or null.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `process` is an open process handle with the query right.
    let sid = unsafe { process_sid(process) };
    // SAFETY: `process` is the handle OpenProcess opened, closed once.
    unsafe { CloseHandle(process) };
    sid
}

/// `Ok(None)` when process `pid` runs as this user; else which user it runs as (a SID, for a
/// message). The CLI checks the process at the other end of its named pipe with it.
///
/// # Errors
/// When the process cannot be opened (gone, or another user's that this one may not query)
/// or its token read: the caller treats that as not this user.
pub fn other_user_of_process(pid: u32) -> io::Result<Option<String>> {
    let (theirs, mine) = (sid_of_process(pid)?, my_sid()?);
    Ok((theirs != mine).then(|| format!("the user with SID {}", sid_text(&theirs))))
}

/// A SID's bytes in the usual `S-1-5-21-...` form.
fn sid_text(sid: &[u8]) -> String {
    // Revision, sub-authority count, a 48-bit big-endian authority, then little-endian
    // 32-bit sub-authorities: the layout every SID has.
    if sid.len() < 8 {
        return "unknown".into();
    }
    let authority = sid[2..8].iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
    let subs = sid[8..]
        .chunks_exact(4)
        .take(usize::from(sid[1]))
        .map(|c| format!("-{}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
    format!("S-{}-{authority}{}", sid[0], subs.collect::<String>())
}

/// Runs `create` with security attributes whose DACL lets only this user in (protected:
/// nothing inherited), so what it creates is private from the moment it exists. The CLI
/// creates its named pipe's instances with it.
///
/// # Errors
/// When the ACL cannot be built, or as `create` fails.
pub fn with_private_security<T>(
    create: impl FnOnce(&SECURITY_ATTRIBUTES) -> io::Result<T>,
) -> io::Result<T> {
    with_private_attributes(false, &[], create)
}

/// The user SID of the process whose handle is `process`, as bytes.
///
/// # Safety
/// `process` is a valid process handle with the query right, open for the whole call.
unsafe fn process_sid(process: HANDLE) -> io::Result<Vec<u8>> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `process` is valid by the caller's contract; `token` is written on success and
    // closed below.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u64; 128]; // 1 KiB, aligned for TOKEN_USER; a user SID is under 80 bytes
    let mut len = 0u32;
    // SAFETY: `buf` is writable for the length given; `len` receives the length needed.
    let ok = unsafe {
        GetTokenInformation(
            token,
            TokenUser,
            buf.as_mut_ptr().cast(),
            (buf.len() * 8) as u32,
            &mut len,
        )
    };
    let err = io::Error::last_os_error();
    // SAFETY: `token` is the handle OpenProcessToken opened, closed once.
    unsafe { CloseHandle(token) };
    if ok == 0 {
        return Err(err);
    }
    // SAFETY: on success `buf` starts with a TOKEN_USER whose SID points into `buf`.
    Ok(unsafe { sid_bytes((*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid) })
}

/// The bytes of a valid SID.
///
/// # Safety
/// `sid` points at a valid SID.
unsafe fn sid_bytes(sid: PSID) -> Vec<u8> {
    // SAFETY: by the caller's contract the SID is valid, so GetLengthSid bytes are readable.
    unsafe { std::slice::from_raw_parts(sid.cast::<u8>(), GetLengthSid(sid) as usize).to_vec() }
}

/// The owner SID of `path` and its ACL's allow entries (SID bytes, rights), inherit-only
/// entries left out. `None` for the entries when the ACL is null (everyone may do anything).
#[allow(clippy::type_complexity)]
fn owner_and_grants(path: &Path) -> io::Result<(Vec<u8>, Option<Vec<(Vec<u8>, u32)>>)> {
    let name = wide(path);
    let (mut owner, mut dacl): (PSID, *mut ACL) = (std::ptr::null_mut(), std::ptr::null_mut());
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `name` is NUL-terminated; the out pointers are valid; on success `sd` owns the
    // memory `owner` and `dacl` point into, freed by `Descriptor` after they are copied.
    let status = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    if status != ERROR_SUCCESS {
        return Err(io::Error::from_raw_os_error(status as i32));
    }
    let _sd = Descriptor(sd);
    // SAFETY: GetNamedSecurityInfoW succeeded with OWNER requested: `owner` is a valid SID.
    let owner = unsafe { sid_bytes(owner) };
    if dacl.is_null() {
        return Ok((owner, None));
    }
    // SAFETY: ACL_SIZE_INFORMATION is plain integers, for which all zeros is a valid value.
    let mut info: ACL_SIZE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: `dacl` is a valid ACL inside `sd`; `info` is writable for its size.
    if unsafe {
        GetAclInformation(
            dacl,
            (&mut info as *mut ACL_SIZE_INFORMATION).cast(),
            size_of::<ACL_SIZE_INFORMATION>() as u32,
            AclSizeInformation,
        )
    } == 0
    {
        return Err(io::Error::last_os_error());
    }
    let mut grants = Vec::new();
    for i in 0..info.AceCount {
        let mut ace: *mut c_void = std::ptr::null_mut();
        // SAFETY: `i` is below the ACL's entry count; GetAce points `ace` into the ACL.
        if unsafe { GetAce(dacl, i, &mut ace) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: every ACE starts with an ACE_HEADER.
        let header = unsafe { &*ace.cast::<ACE_HEADER>() };
        if header.AceType != ALLOWED || u32::from(header.AceFlags) & INHERIT_ONLY_ACE != 0 {
            continue;
        }
        // SAFETY: an allow entry is an ACCESS_ALLOWED_ACE whose SID starts at `SidStart`.
        let allowed = unsafe { &*ace.cast::<ACCESS_ALLOWED_ACE>() };
        // SAFETY: as above, the entry's SID starts at `SidStart` and is valid.
        let sid = unsafe { sid_bytes((&allowed.SidStart as *const u32).cast_mut().cast()) };
        grants.push((sid, allowed.Mask));
    }
    Ok((owner, Some(grants)))
}

/// True for this user, the system and the administrators: whoever can act as them owns the
/// machine anyway (as root does on Unix).
fn trusted(sid: &[u8], me: &[u8]) -> bool {
    let psid = sid.as_ptr().cast_mut().cast();
    // SAFETY: `sid` holds the bytes of a valid SID (copied by `sid_bytes`).
    sid == me
        || unsafe { IsWellKnownSid(psid, WinLocalSystemSid) } != 0
        || unsafe { IsWellKnownSid(psid, WinBuiltinAdministratorsSid) } != 0
}

/// True when `grants` give any of `rights` to a SID other than the trusted ones.
fn granted_to_others(grants: &[(Vec<u8>, u32)], rights: u32, me: &[u8]) -> bool {
    grants
        .iter()
        .any(|(sid, mask)| mask & rights != 0 && !trusted(sid, me))
}

/// An ACL granting this user everything (inherited by what a directory will hold when
/// `inherit`), then each of `others` (SID bytes, rights): none but in tests.
fn private_acl(inherit: bool, others: &[(&[u8], u32)]) -> io::Result<Vec<u64>> {
    let me = my_sid()?;
    let mut acl = vec![0u64; 64]; // 512 bytes, aligned: one entry of one SID fits many times
    let flags = if inherit {
        OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE
    } else {
        0
    };
    let acl_ptr = acl.as_mut_ptr().cast::<ACL>();
    // SAFETY: `acl` is writable for the length given; `me` holds a valid SID.
    let built = unsafe {
        InitializeAcl(acl_ptr, (acl.len() * 8) as u32, ACL_REVISION) != 0
            && AddAccessAllowedAceEx(
                acl_ptr,
                ACL_REVISION,
                flags,
                FILE_ALL_ACCESS,
                me.as_ptr().cast_mut().cast(),
            ) != 0
            && others.iter().all(|(sid, rights)| {
                AddAccessAllowedAceEx(
                    acl_ptr,
                    ACL_REVISION,
                    0,
                    *rights,
                    sid.as_ptr().cast_mut().cast(),
                ) != 0
            })
    };
    if !built {
        return Err(io::Error::last_os_error());
    }
    Ok(acl)
}

/// Runs `create` with security attributes holding [`private_acl`] (protected: nothing is
/// inherited from the parent), so the object is private from the moment it exists.
fn with_private_attributes<T>(
    inherit: bool,
    others: &[(&[u8], u32)],
    create: impl FnOnce(&SECURITY_ATTRIBUTES) -> io::Result<T>,
) -> io::Result<T> {
    let mut acl = private_acl(inherit, others)?;
    // SAFETY: SECURITY_DESCRIPTOR is integers and pointers, for which all zeros is valid (null).
    let mut sd: SECURITY_DESCRIPTOR = unsafe { std::mem::zeroed() };
    let sd_ptr: PSECURITY_DESCRIPTOR = (&mut sd as *mut SECURITY_DESCRIPTOR).cast();
    // SAFETY: `sd` is a writable descriptor; `acl` outlives every use of `sd` (both live
    // until this function returns, after `create`).
    let ok = unsafe {
        InitializeSecurityDescriptor(sd_ptr, 1) != 0
            && SetSecurityDescriptorDacl(sd_ptr, 1, acl.as_mut_ptr().cast::<ACL>(), 0) != 0
            && SetSecurityDescriptorControl(sd_ptr, SE_DACL_PROTECTED, SE_DACL_PROTECTED) != 0
    };
    if !ok {
        return Err(io::Error::last_os_error());
    }
    let attributes = SECURITY_ATTRIBUTES {
        nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: sd_ptr,
        bInheritHandle: 0,
    };
    create(&attributes)
}

/// Creates directory `dir` (its parent exists) with a protected ACL that lets only this user
/// in, inherited by every file and folder made in it.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    create_dir_granting(dir, &[])
}

/// [`create_private_dir`], granting `others` too.
fn create_dir_granting(dir: &Path, others: &[(&[u8], u32)]) -> io::Result<()> {
    let name = wide(dir);
    with_private_attributes(true, others, |attributes| {
        // SAFETY: `name` is NUL-terminated; `attributes` is valid for the call.
        if unsafe { CreateDirectoryW(name.as_ptr(), attributes) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    })
}

/// Opens `path` as `how` says; a file it creates gets an ACL for this user alone (as the
/// private directory's files inherit). A link is opened as itself and refused.
pub(crate) fn open_private(path: &Path, how: Create) -> io::Result<File> {
    open_granting(path, how, &[])
}

/// [`open_private`], granting `others` too.
fn open_granting(path: &Path, how: Create, others: &[(&[u8], u32)]) -> io::Result<File> {
    let (access, disposition) = match how {
        Create::ReadWrite => (GENERIC_READ | GENERIC_WRITE, OPEN_ALWAYS),
        Create::Truncate => (GENERIC_WRITE, CREATE_ALWAYS),
        Create::New => (GENERIC_WRITE, CREATE_NEW),
    };
    let name = wide(path);
    let file = with_private_attributes(false, others, |attributes| {
        // SAFETY: `name` is NUL-terminated; `attributes` is valid for the call; the handle
        // returned is owned by the `File` made from it, which closes it once.
        unsafe {
            let handle = CreateFileW(
                name.as_ptr(),
                access,
                FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                attributes,
                disposition,
                FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
                std::ptr::null_mut(),
            );
            if handle == INVALID_HANDLE_VALUE {
                return Err(io::Error::last_os_error());
            }
            Ok(File::from_raw_handle(handle))
        }
    })?;
    if file.metadata()?.file_type().is_symlink() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a symbolic link stands in its place (refused)",
        ));
    }
    Ok(file)
}

/// Why `dir` is not safe to keep a store in: its owner is someone else, or its ACL lets
/// another user add, replace or delete what it holds. `None` when only this user (or the
/// system, or the administrators) can.
pub(crate) fn unsafe_directory(dir: &Path, _meta: &Metadata) -> io::Result<Option<String>> {
    let me = my_sid()?;
    let (owner, grants) = owner_and_grants(dir)?;
    Ok(if !trusted(&owner, &me) {
        Some("another user owns it (its ACL's owner is not you)".into())
    } else if grants.is_none_or(|g| granted_to_others(&g, WRITE_RIGHTS, &me)) {
        Some(format!(
            "its ACL lets other users write it; `icacls \"{}\" /inheritance:r /grant:r \"%USERNAME%\":(OI)(CI)F` fixes that",
            dir.display()
        ))
    } else {
        None
    })
}

/// Why a key file may be read or written by other users (its ACL), or `None`.
pub(crate) fn exposed_file(path: &Path, _meta: &Metadata) -> io::Result<Option<String>> {
    let me = my_sid()?;
    let (_, grants) = owner_and_grants(path)?;
    Ok(grants
        .is_none_or(|g| granted_to_others(&g, READ_RIGHTS | WRITE_RIGHTS, &me))
        .then(|| {
            format!(
                "its ACL lets other users in; `icacls \"{}\" /inheritance:r /grant:r \"%USERNAME%\":F` fixes that",
                path.display()
            )
        }))
}

/// Reads exactly `buf.len()` bytes at `offset` (moves the file's position, which no caller
/// uses).
pub(crate) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Nothing to do: NTFS journals renames and new names, and a directory handle cannot be
/// flushed without write access to it.
pub(crate) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use windows_sys::Win32::Security::{CreateWellKnownSid, WinWorldSid};

    /// The SID of Everyone.
    fn everyone() -> Vec<u8> {
        let mut sid = vec![0u8; 68];
        let mut len = sid.len() as u32;
        // SAFETY: `sid` is writable for `len` bytes.
        let ok = unsafe {
            CreateWellKnownSid(
                WinWorldSid,
                std::ptr::null_mut(),
                sid.as_mut_ptr().cast(),
                &mut len,
            )
        };
        assert_ne!(ok, 0);
        sid.truncate(len as usize);
        sid
    }

    #[test]
    fn a_private_directory_passes_and_one_everyone_may_write_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("störe");
        create_private_dir(&dir).unwrap();
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(unsafe_directory(&dir, &meta).unwrap(), None);
        let file = dir.join("LOCK");
        drop(open_private(&file, Create::ReadWrite).unwrap());
        assert_eq!(exposed_file(&file, &meta).unwrap(), None);
    }

    /// What a directory's ACL may grant: reading to anyone, changing only to this user, the
    /// system and the administrators. (Wine keeps a directory's ACL as Unix mode bits, which
    /// cannot say "Everyone may delete a child", so this is checked on the entries, not
    /// through a directory made with them.)
    #[test]
    fn only_trusted_users_may_change_a_store_directory() {
        let (me, world) = (my_sid().unwrap(), everyone());
        let only_me = [(me.clone(), FILE_ALL_ACCESS)];
        assert!(!granted_to_others(&only_me, WRITE_RIGHTS, &me));
        let readable = [
            (me.clone(), FILE_ALL_ACCESS),
            (world.clone(), FILE_READ_DATA),
        ];
        assert!(!granted_to_others(&readable, WRITE_RIGHTS, &me));
        assert!(granted_to_others(&readable, READ_RIGHTS, &me));
        for rights in [FILE_WRITE_DATA, FILE_DELETE_CHILD, WRITE_DAC, GENERIC_ALL] {
            let loose = [(me.clone(), FILE_ALL_ACCESS), (world.clone(), rights)];
            assert!(granted_to_others(&loose, WRITE_RIGHTS, &me), "{rights:#x}");
        }
    }

    #[test]
    fn a_key_file_everyone_may_read_is_exposed() {
        let root = tempfile::tempdir().unwrap();
        let key = root.path().join("clé");
        drop(open_private(&key, Create::New).unwrap());
        let meta = std::fs::metadata(&key).unwrap();
        assert_eq!(exposed_file(&key, &meta).unwrap(), None);
        let shared = root.path().join("shared clé");
        drop(open_granting(&shared, Create::New, &[(&everyone(), FILE_READ_DATA)]).unwrap());
        assert!(exposed_file(&shared, &meta)
            .unwrap()
            .unwrap()
            .contains("icacls"));
        // A file that exists already is refused by `New`, kept by `ReadWrite`.
        assert!(open_private(&key, Create::New).is_err());
        drop(open_private(&key, Create::ReadWrite).unwrap());
    }

    #[test]
    fn this_process_runs_as_this_user_and_a_sid_reads_as_text() {
        assert_eq!(other_user_of_process(std::process::id()).unwrap(), None);
        assert!(
            other_user_of_process(u32::MAX - 3).is_err(),
            "no such process"
        );
        assert_eq!(sid_text(&everyone()), "S-1-1-0");
        let me = sid_text(&my_sid().unwrap());
        assert!(me.starts_with("S-1-5-"), "{me}");
    }

    #[test]
    fn positioned_reads_read_where_asked() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = File::open(&path).unwrap();
        let mut buf = [0u8; 4];
        read_exact_at(&file, &mut buf, 3).unwrap();
        assert_eq!(&buf, b"3456");
        assert!(read_exact_at(&file, &mut buf, 8).is_err());
    }
}
