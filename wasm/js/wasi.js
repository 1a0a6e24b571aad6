// WASI preview 1 for memloop's WebAssembly build, in the browser: the calls the Rust standard
// library and wasi-libc make (files, directories, clocks, random bytes, arguments), answered
// over mounted file systems (`opfs.js`: the store's folder in the Origin Private File System,
// and the model's files in memory). Runs in a dedicated Worker: every file call is synchronous,
// as WebAssembly expects, because OPFS's sync access handles are.
//
// A file system mounted here answers, for paths relative to its mount (no leading slash):
//   stat(path) -> { dir: bool, size: number, mtimeMs: number } | null
//   open(path, { create, exclusive, truncate }) -> a file: read(view, at), write(view, at),
//     size(), truncate(n), flush(), close()
//   mkdir(path), rmdir(path), unlink(path), rename(from, to), list(path) -> names
// and throws a `WasiError` (an errno) for what cannot be done.

/** An error a file system throws: its WASI errno. */
export class WasiError extends Error {
  constructor (errno, message) {
    super(message || `WASI errno ${errno}`)
    this.errno = errno
  }
}

/** The errno values used here (WASI preview 1). */
export const E = {
  SUCCESS: 0,
  ACCES: 2,
  BADF: 8,
  EXIST: 20,
  FAULT: 21,
  INVAL: 28,
  IO: 29,
  ISDIR: 31,
  NAMETOOLONG: 37,
  NOENT: 44,
  NOSPC: 51,
  NOSYS: 52,
  NOTDIR: 54,
  NOTEMPTY: 55,
  NOTSUP: 58,
  PERM: 63,
  ROFS: 69,
  SPIPE: 70,
}

const FILETYPE_CHAR = 2
const FILETYPE_DIRECTORY = 3
const FILETYPE_REGULAR = 4
const O_CREAT = 1
const O_DIRECTORY = 2
const O_EXCL = 4
const O_TRUNC = 8
const FDFLAG_APPEND = 1
const RIGHTS_ALL = 0x1fffffffn

/** Thrown by `proc_exit`: the instance asked to end. */
export class WasiExit extends Error {
  constructor (code) {
    super(`exit ${code}`)
    this.code = code
  }
}

/**
 * The path `rel` joined to the folder `base` (both mount-relative, no leading slash), with
 * `.` and `..` resolved; `null` when it climbs out of the mount.
 */
function join (base, rel) {
  const parts = base === '' ? [] : base.split('/')
  for (const p of rel.split('/')) {
    if (p === '' || p === '.') continue
    if (p === '..') {
      if (parts.length === 0) return null
      parts.pop()
    } else parts.push(p)
  }
  return parts.join('/')
}

/**
 * A WASI instance's host side. `mounts` maps an absolute folder ("/store") to a file system;
 * each becomes a preopened directory, in order. `stdout` and `stderr` receive lines.
 */
export class Wasi {
  constructor ({ mounts = {}, args = ['memloop'], env = {}, stdout = console.log, stderr = console.warn } = {}) {
    this.args = args
    this.env = Object.entries(env).map(([k, v]) => `${k}=${v}`)
    this.memory = null
    this.out = { 1: { write: stdout, pending: '' }, 2: { write: stderr, pending: '' } }
    this.fds = new Map()
    this.fds.set(0, { kind: 'stdio' })
    this.fds.set(1, { kind: 'stdio' })
    this.fds.set(2, { kind: 'stdio' })
    let fd = 3
    for (const [name, fs] of Object.entries(mounts)) {
      this.fds.set(fd++, { kind: 'dir', fs, path: '', preopen: name })
    }
    this.next = fd
    this.decoder = new TextDecoder()
    this.encoder = new TextEncoder()
    this.imports = this.#imports()
  }

  /** Binds the instance's memory (after instantiation). */
  bind (memory) {
    this.memory = memory
  }

  get #view () {
    return new DataView(this.memory.buffer)
  }

  get #bytes () {
    return new Uint8Array(this.memory.buffer)
  }

  #string (ptr, len) {
    return this.decoder.decode(this.#bytes.subarray(ptr, ptr + len))
  }

  /** The iovecs at `ptr` as views of the memory. */
  #iovs (ptr, count) {
    const v = this.#view
    const out = []
    for (let i = 0; i < count; i++) {
      const buf = v.getUint32(ptr + i * 8, true)
      const len = v.getUint32(ptr + i * 8 + 4, true)
      out.push(new Uint8Array(this.memory.buffer, buf, len))
    }
    return out
  }

  #fd (fd, kind) {
    const f = this.fds.get(fd)
    if (!f) throw new WasiError(E.BADF)
    if (kind && f.kind !== kind) throw new WasiError(kind === 'dir' ? E.NOTDIR : (f.kind === 'dir' ? E.ISDIR : E.BADF))
    return f
  }

  /** Resolves `path` (in memory at ptr, len) against directory fd `dirfd`. */
  #resolve (dirfd, ptr, len) {
    const dir = this.#fd(dirfd, 'dir')
    const path = this.#string(ptr, len)
    if (path.startsWith('/')) throw new WasiError(E.PERM)
    const joined = join(dir.path, path)
    if (joined === null) throw new WasiError(E.PERM)
    return { fs: dir.fs, path: joined }
  }

  #filestat (ptr, { dir, size, mtimeMs }, ino) {
    const v = this.#view
    const ns = BigInt(Math.round((mtimeMs || 0) * 1e6))
    v.setBigUint64(ptr, 0n, true)
    v.setBigUint64(ptr + 8, BigInt(ino), true)
    v.setUint8(ptr + 16, dir ? FILETYPE_DIRECTORY : FILETYPE_REGULAR)
    v.setBigUint64(ptr + 24, 1n, true)
    v.setBigUint64(ptr + 32, BigInt(size), true)
    v.setBigUint64(ptr + 40, ns, true)
    v.setBigUint64(ptr + 48, ns, true)
    v.setBigUint64(ptr + 56, ns, true)
  }

  /** Every call, each returning an errno; a thrown `WasiError` becomes its errno. */
  #imports () {
    const calls = {
      args_sizes_get: (countPtr, sizePtr) => this.#sizes(this.args, countPtr, sizePtr),
      args_get: (argv, buf) => this.#strings(this.args, argv, buf),
      environ_sizes_get: (countPtr, sizePtr) => this.#sizes(this.env, countPtr, sizePtr),
      environ_get: (envp, buf) => this.#strings(this.env, envp, buf),
      clock_res_get: (id, ptr) => {
        this.#view.setBigUint64(ptr, 1000n, true)
        return E.SUCCESS
      },
      clock_time_get: (id, precision, ptr) => {
        const ns = id === 0
          ? BigInt(Date.now()) * 1000000n
          : BigInt(Math.round(performance.now() * 1e6))
        this.#view.setBigUint64(ptr, ns, true)
        return E.SUCCESS
      },
      random_get: (ptr, len) => {
        // getRandomValues fills at most 65,536 bytes a call.
        for (let at = 0; at < len; at += 65536) {
          crypto.getRandomValues(new Uint8Array(this.memory.buffer, ptr + at, Math.min(65536, len - at)))
        }
        return E.SUCCESS
      },
      proc_exit: (code) => {
        throw new WasiExit(code)
      },
      proc_raise: () => E.NOSYS,
      sched_yield: () => E.SUCCESS,
      poll_oneoff: (inPtr, outPtr, count, neventsPtr) => {
        // No blocking here: every subscription (a sleep's clock) is answered at once.
        const v = this.#view
        for (let i = 0; i < count; i++) {
          const sub = inPtr + i * 48
          const ev = outPtr + i * 32
          v.setBigUint64(ev, v.getBigUint64(sub, true), true)
          v.setUint16(ev + 8, E.SUCCESS, true)
          v.setUint8(ev + 10, v.getUint8(sub + 8))
        }
        v.setUint32(neventsPtr, count, true)
        return E.SUCCESS
      },
      fd_prestat_get: (fd, ptr) => {
        const f = this.fds.get(fd)
        if (!f || !f.preopen) return E.BADF
        this.#view.setUint8(ptr, 0)
        this.#view.setUint32(ptr + 4, this.encoder.encode(f.preopen).length, true)
        return E.SUCCESS
      },
      fd_prestat_dir_name: (fd, ptr, len) => {
        const f = this.fds.get(fd)
        if (!f || !f.preopen) return E.BADF
        const name = this.encoder.encode(f.preopen)
        this.#bytes.set(name.subarray(0, len), ptr)
        return E.SUCCESS
      },
      fd_fdstat_get: (fd, ptr) => {
        const f = this.#fd(fd)
        const v = this.#view
        v.setUint8(ptr, f.kind === 'stdio' ? FILETYPE_CHAR : f.kind === 'dir' ? FILETYPE_DIRECTORY : FILETYPE_REGULAR)
        v.setUint16(ptr + 2, f.append ? FDFLAG_APPEND : 0, true)
        v.setBigUint64(ptr + 8, RIGHTS_ALL, true)
        v.setBigUint64(ptr + 16, RIGHTS_ALL, true)
        return E.SUCCESS
      },
      fd_fdstat_set_flags: (fd, flags) => {
        const f = this.#fd(fd)
        f.append = (flags & FDFLAG_APPEND) !== 0
        return E.SUCCESS
      },
      fd_fdstat_set_rights: () => E.SUCCESS,
      fd_advise: () => E.SUCCESS,
      fd_allocate: (fd, offset, len) => {
        const f = this.#fd(fd, 'file')
        const end = Number(offset + len)
        if (f.file.size() < end) f.file.truncate(end)
        return E.SUCCESS
      },
      fd_close: (fd) => {
        const f = this.#fd(fd)
        if (f.preopen || f.kind === 'stdio') return E.SUCCESS
        this.fds.delete(fd)
        if (f.kind === 'file') f.file.close()
        return E.SUCCESS
      },
      fd_datasync: (fd) => this.#sync(fd),
      fd_sync: (fd) => this.#sync(fd),
      fd_filestat_get: (fd, ptr) => {
        const f = this.#fd(fd)
        if (f.kind === 'stdio') {
          this.#filestat(ptr, { dir: false, size: 0, mtimeMs: 0 }, fd)
          this.#view.setUint8(ptr + 16, FILETYPE_CHAR)
          return E.SUCCESS
        }
        if (f.kind === 'dir') {
          this.#filestat(ptr, f.fs.stat(f.path) || { dir: true, size: 0, mtimeMs: 0 }, fd)
          return E.SUCCESS
        }
        this.#filestat(ptr, { dir: false, size: f.file.size(), mtimeMs: f.file.mtimeMs || 0 }, f.file.ino || fd)
        return E.SUCCESS
      },
      fd_filestat_set_size: (fd, size) => {
        this.#fd(fd, 'file').file.truncate(Number(size))
        return E.SUCCESS
      },
      fd_filestat_set_times: () => E.SUCCESS,
      fd_read: (fd, iovs, count, nreadPtr) => {
        const f = this.#fd(fd)
        if (f.kind === 'stdio') {
          this.#view.setUint32(nreadPtr, 0, true)
          return E.SUCCESS
        }
        if (f.kind !== 'file') return E.ISDIR
        const total = this.#readv(f.file, iovs, count, f.pos, nreadPtr)
        f.pos += total
        return E.SUCCESS
      },
      fd_pread: (fd, iovs, count, offset, nreadPtr) => {
        this.#readv(this.#fd(fd, 'file').file, iovs, count, Number(offset), nreadPtr)
        return E.SUCCESS
      },
      fd_write: (fd, iovs, count, nwrittenPtr) => {
        const f = this.#fd(fd)
        let total = 0
        if (f.kind === 'stdio') {
          for (const iov of this.#iovs(iovs, count)) {
            this.#print(fd, iov)
            total += iov.length
          }
        } else if (f.kind === 'file') {
          for (const iov of this.#iovs(iovs, count)) {
            if (f.append) f.pos = f.file.size()
            const n = f.file.write(iov, f.pos)
            f.pos += n
            total += n
          }
        } else return E.ISDIR
        this.#view.setUint32(nwrittenPtr, total, true)
        return E.SUCCESS
      },
      fd_pwrite: (fd, iovs, count, offset, nwrittenPtr) => {
        const f = this.#fd(fd, 'file')
        let at = Number(offset)
        let total = 0
        for (const iov of this.#iovs(iovs, count)) {
          const n = f.file.write(iov, at)
          at += n
          total += n
        }
        this.#view.setUint32(nwrittenPtr, total, true)
        return E.SUCCESS
      },
      fd_seek: (fd, offset, whence, newPtr) => {
        const f = this.#fd(fd)
        if (f.kind !== 'file') return E.SPIPE
        const base = whence === 0 ? 0 : whence === 1 ? f.pos : f.file.size()
        const pos = base + Number(offset)
        if (pos < 0) return E.INVAL
        f.pos = pos
        this.#view.setBigUint64(newPtr, BigInt(pos), true)
        return E.SUCCESS
      },
      fd_tell: (fd, ptr) => {
        const f = this.#fd(fd, 'file')
        this.#view.setBigUint64(ptr, BigInt(f.pos), true)
        return E.SUCCESS
      },
      fd_renumber: (from, to) => {
        const f = this.#fd(from)
        const old = this.fds.get(to)
        if (old && old.kind === 'file') old.file.close()
        this.fds.set(to, f)
        this.fds.delete(from)
        return E.SUCCESS
      },
      fd_readdir: (fd, buf, len, cookie, usedPtr) => {
        const f = this.#fd(fd, 'dir')
        const names = ['.', '..', ...f.fs.list(f.path)]
        const v = this.#view
        let used = 0
        for (let i = Number(cookie); i < names.length; i++) {
          const name = this.encoder.encode(names[i])
          const child = i < 2 ? { dir: true } : f.fs.stat(join(f.path, names[i]))
          const entry = new Uint8Array(24 + name.length)
          const ev = new DataView(entry.buffer)
          ev.setBigUint64(0, BigInt(i + 1), true)
          ev.setBigUint64(8, BigInt(i + 1), true)
          ev.setUint32(16, name.length, true)
          ev.setUint8(20, child && child.dir ? FILETYPE_DIRECTORY : FILETYPE_REGULAR)
          entry.set(name, 24)
          const room = Math.min(entry.length, len - used)
          this.#bytes.set(entry.subarray(0, room), buf + used)
          used += room
          if (used >= len) break
        }
        v.setUint32(usedPtr, used, true)
        return E.SUCCESS
      },
      path_open: (dirfd, dirflags, ptr, len, oflags, rightsBase, rightsInheriting, fdflags, fdPtr) => {
        const { fs, path } = this.#resolve(dirfd, ptr, len)
        const stat = fs.stat(path)
        let entry
        if (oflags & O_DIRECTORY || (stat && stat.dir)) {
          if (!stat) return E.NOENT
          if (!stat.dir) return E.NOTDIR
          if (oflags & (O_CREAT | O_TRUNC) && oflags & O_EXCL) return E.EXIST
          entry = { kind: 'dir', fs, path }
        } else {
          const file = fs.open(path, {
            create: (oflags & O_CREAT) !== 0,
            exclusive: (oflags & O_EXCL) !== 0,
            truncate: (oflags & O_TRUNC) !== 0,
            write: (rightsBase & 0x40n) !== 0n, // fd_write
          })
          entry = { kind: 'file', file, pos: 0, append: (fdflags & FDFLAG_APPEND) !== 0 }
        }
        const fd = this.next++
        this.fds.set(fd, entry)
        this.#view.setUint32(fdPtr, fd, true)
        return E.SUCCESS
      },
      path_filestat_get: (dirfd, flags, ptr, len, out) => {
        const { fs, path } = this.#resolve(dirfd, ptr, len)
        const stat = fs.stat(path)
        if (!stat) return E.NOENT
        this.#filestat(out, stat, stat.ino || 1)
        return E.SUCCESS
      },
      path_filestat_set_times: () => E.SUCCESS,
      path_create_directory: (dirfd, ptr, len) => {
        const { fs, path } = this.#resolve(dirfd, ptr, len)
        fs.mkdir(path)
        return E.SUCCESS
      },
      path_remove_directory: (dirfd, ptr, len) => {
        const { fs, path } = this.#resolve(dirfd, ptr, len)
        fs.rmdir(path)
        return E.SUCCESS
      },
      path_unlink_file: (dirfd, ptr, len) => {
        const { fs, path } = this.#resolve(dirfd, ptr, len)
        fs.unlink(path)
        return E.SUCCESS
      },
      path_rename: (fromFd, fromPtr, fromLen, toFd, toPtr, toLen) => {
        const from = this.#resolve(fromFd, fromPtr, fromLen)
        const to = this.#resolve(toFd, toPtr, toLen)
        if (from.fs !== to.fs) return E.NOTSUP
        from.fs.rename(from.path, to.path)
        return E.SUCCESS
      },
      path_readlink: () => E.INVAL,
      path_symlink: () => E.NOTSUP,
      path_link: () => E.NOTSUP,
      sock_accept: () => E.NOTSUP,
      sock_recv: () => E.NOTSUP,
      sock_send: () => E.NOTSUP,
      sock_shutdown: () => E.NOTSUP,
    }
    const wrapped = {}
    for (const [name, f] of Object.entries(calls)) {
      wrapped[name] = (...args) => {
        try {
          return f(...args)
        } catch (e) {
          if (e instanceof WasiError) return e.errno
          if (e instanceof WasiExit) throw e
          // A storage failure the file system did not name: an I/O error, never a crash.
          this.lastHostError = e
          return E.IO
        }
      }
    }
    return wrapped
  }

  /** `wasi_snapshot_preview1`'s imports for `module`: every one it names, unknown ones ENOSYS. */
  importsFor (module) {
    const out = {}
    for (const { module: m, name } of WebAssembly.Module.imports(module)) {
      if (m === 'wasi_snapshot_preview1') out[name] = this.imports[name] || (() => E.NOSYS)
    }
    return { wasi_snapshot_preview1: out }
  }

  /** Reads `file` from `at` into the iovecs until one is not filled; the count, also written to `nreadPtr`. */
  #readv (file, iovs, count, at, nreadPtr) {
    let total = 0
    for (const iov of this.#iovs(iovs, count)) {
      const n = file.read(iov, at + total)
      total += n
      if (n < iov.length) break
    }
    this.#view.setUint32(nreadPtr, total, true)
    return total
  }

  #sync (fd) {
    const f = this.#fd(fd)
    if (f.kind === 'file') f.file.flush()
    return E.SUCCESS
  }

  #sizes (list, countPtr, sizePtr) {
    this.#view.setUint32(countPtr, list.length, true)
    this.#view.setUint32(sizePtr, list.reduce((n, s) => n + this.encoder.encode(s).length + 1, 0), true)
    return E.SUCCESS
  }

  #strings (list, ptrs, buf) {
    for (const s of list) {
      const b = this.encoder.encode(s)
      this.#view.setUint32(ptrs, buf, true)
      ptrs += 4
      this.#bytes.set(b, buf)
      this.#bytes[buf + b.length] = 0
      buf += b.length + 1
    }
    return E.SUCCESS
  }

  #print (fd, bytes) {
    const o = this.out[fd]
    if (!o) return
    o.pending += this.decoder.decode(bytes, { stream: true })
    let nl
    while ((nl = o.pending.indexOf('\n')) >= 0) {
      o.write(o.pending.slice(0, nl))
      o.pending = o.pending.slice(nl + 1)
    }
  }
}
