// The store's folder in the Origin Private File System, as the synchronous file system
// `wasi.js` mounts: a pool of slot files, each held open through a FileSystemSyncAccessHandle
// for the store's whole life, each holding one of the store's files (or folders) under a
// header that names it. Sync access handles are synchronous once made, but making one is
// asynchronous: WebAssembly cannot wait for a promise in the middle of a call, so the handles
// are made before a call runs (at open, and topped up after every call), and a file created
// during a call takes a free slot (as SQLite's "opfs-sahpool" VFS does).
//
// A slot file: a 4,096-byte header, then the file's bytes.
//   0   8   magic "MLOPFS01" (zeros: a free slot)
//   8   8   generation, u64 little-endian: a later header wins over an earlier one
//   16  1   kind: 1 a file, 2 a folder
//   18  2   path length in bytes, u16 little-endian (at most 4,000)
//   20  4   CRC-32 of bytes 0..20 and the path
//   24  …   the path, UTF-8, relative to the store's folder
// A header that fails its magic, length or CRC is a free slot.
//
// Durability. `flush()` on a slot (fsync, as redb and the engine call it) flushes its handle:
// what the engine acknowledged after a flush survives closing the tab, a reload and a crash of
// the browser's process; what it wrote since its last flush may not. A rename writes the
// renamed slot's header under the new path with a higher generation and flushes it before it
// frees the slot it replaced: a crash between the two leaves both headers, and the higher
// generation wins when the store next opens, so a rename is all or nothing, as the engine's
// atomic writes (write a temporary file, flush, rename over) need. Storage the browser evicts
// (a site's data cleared by the user, or by the browser under storage pressure when the origin
// is not persisted: `navigator.storage.persist()`) is gone whole.
//
// Only one context may hold a store: the first slot opened is `LOCK`'s, whose sync access
// handle is exclusive across tabs and workers, so a second tab's open fails with `locked`.

import { E, WasiError } from './wasi.js'

const HEADER = 4096
const MAGIC = new TextEncoder().encode('MLOPFS01')
const KIND_FILE = 1
const KIND_DIR = 2
const MAX_PATH = 4000
const SLOT = /^slot-(\d+)$/

const CRC_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

/** CRC-32 (IEEE) of `bytes`. */
function crc32 (bytes) {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** Runs `f`, turning the storage's own failures into WASI errnos. */
function storage (f) {
  try {
    return f()
  } catch (e) {
    if (e instanceof WasiError) throw e
    if (e && e.name === 'QuotaExceededError') throw new WasiError(E.NOSPC, 'the origin\'s storage quota is used up')
    throw new WasiError(E.IO, `OPFS: ${e && e.message}`)
  }
}

/** How long an open waits for a store's lock held elsewhere before it is refused, in ms. */
export const LOCK_WAIT_MS = 3000

/** The error an open of a store another tab or worker holds rejects with. */
export class StoreLockedError extends Error {
  constructor (name) {
    super(`the store "${name}" is open in another tab or worker (OPFS's sync access handles are exclusive); close it there first`)
    this.code = 'locked'
  }
}

/** A store's folder in OPFS as a file system for `wasi.js`. */
export class OpfsFolder {
  /**
   * Opens the folder `dir` (a FileSystemDirectoryHandle), taking its lock; `reserve` free
   * slots are kept ready for files a call creates. A lock held elsewhere is waited for up to
   * `lockWaitMs` (a reloaded page's old Worker lets go of it only as it is torn down, a moment
   * after the new page may open the store), then refused with a `StoreLockedError`.
   */
  static async open (dir, { name = dir.name, reserve = 8, lockWaitMs = LOCK_WAIT_MS } = {}) {
    const lockFile = await dir.getFileHandle('LOCK', { create: true })
    let lock
    for (let waited = 0, step = 20; ; step = Math.min(2 * step, 250)) {
      try {
        lock = await lockFile.createSyncAccessHandle()
        break
      } catch (e) {
        if (!(e && (e.name === 'NoModificationAllowedError' || e.name === 'InvalidStateError'))) throw e
        if (waited >= lockWaitMs) throw new StoreLockedError(name)
        await new Promise((resolve) => setTimeout(resolve, step))
        waited += step
      }
    }
    const folder = new OpfsFolder(dir, lock, reserve)
    try {
      const found = []
      for await (const [entry, handle] of dir.entries()) {
        const m = SLOT.exec(entry)
        if (m && handle.kind === 'file') found.push([Number(m[1]), handle])
      }
      found.sort((a, b) => a[0] - b[0])
      for (const [n, handle] of found) folder.#adopt(n, await handle.createSyncAccessHandle())
      folder.#settle()
      await folder.topUp()
    } catch (e) {
      folder.close()
      throw e
    }
    return folder
  }

  constructor (dir, lock, reserve) {
    this.dir = dir
    this.lock = lock
    this.reserve = reserve
    this.slots = [] // every slot: { n, handle, path, kind, gen, open, orphan }
    this.byPath = new Map()
    this.free = []
    this.gen = 0
    this.next = 0
  }

  /** Reads slot `n`'s header. */
  #adopt (n, handle) {
    const slot = { n, handle, path: null, kind: 0, gen: 0, open: 0, orphan: false, life: 0 }
    this.slots.push(slot)
    this.next = Math.max(this.next, n + 1)
    const head = new Uint8Array(24 + MAX_PATH)
    const got = storage(() => handle.read(head, { at: 0 }))
    const v = new DataView(head.buffer)
    const len = got >= 24 ? v.getUint16(18, true) : 0
    const valid = got >= 24 && MAGIC.every((b, i) => head[i] === b) && len > 0 && len <= MAX_PATH &&
      got >= 24 + len && (head[16] === KIND_FILE || head[16] === KIND_DIR)
    if (valid) {
      const sum = new Uint8Array(20 + len)
      sum.set(head.subarray(0, 20))
      sum.set(head.subarray(24, 24 + len), 20)
      if (crc32(sum) === v.getUint32(20, true)) {
        slot.path = new TextDecoder().decode(head.subarray(24, 24 + len))
        slot.kind = head[16]
        slot.gen = Number(v.getBigUint64(8, true))
        this.gen = Math.max(this.gen, slot.gen)
      }
    }
  }

  /** Maps paths to slots: of two slots naming one path, the later generation wins. */
  #settle () {
    for (const slot of this.slots) {
      if (slot.path === null) {
        this.free.push(slot)
        continue
      }
      const other = this.byPath.get(slot.path)
      if (other && other.gen > slot.gen) {
        this.#release(slot)
        continue
      }
      if (other) this.#release(other)
      this.byPath.set(slot.path, slot)
    }
  }

  /** Makes slot files until `reserve` are free (between calls: making a handle is async). */
  async topUp () {
    while (this.free.length < this.reserve) {
      const n = this.next++
      const file = await this.dir.getFileHandle(`slot-${n}`, { create: true })
      const handle = await file.createSyncAccessHandle()
      const slot = { n, handle, path: null, kind: 0, gen: 0, open: 0, orphan: false, life: 0 }
      this.slots.push(slot)
      this.#release(slot)
    }
  }

  /** Writes `slot`'s header naming `path` (kind `kind`) at the next generation, flushed. */
  #claim (slot, path, kind) {
    const name = new TextEncoder().encode(path)
    if (name.length > MAX_PATH) throw new WasiError(E.NAMETOOLONG)
    const head = new Uint8Array(24 + name.length)
    const v = new DataView(head.buffer)
    head.set(MAGIC, 0)
    v.setBigUint64(8, BigInt(++this.gen), true)
    head[16] = kind
    v.setUint16(18, name.length, true)
    head.set(name, 24)
    const sum = new Uint8Array(20 + name.length)
    sum.set(head.subarray(0, 20))
    sum.set(name, 20)
    v.setUint32(20, crc32(sum), true)
    storage(() => {
      slot.handle.write(head, { at: 0 })
      slot.handle.flush()
    })
    slot.path = path
    slot.kind = kind
    slot.gen = this.gen
  }

  /** Frees `slot`: its header cleared and its bytes dropped, flushed. */
  #release (slot) {
    storage(() => {
      slot.handle.truncate(HEADER)
      slot.handle.write(new Uint8Array(24), { at: 0 })
      slot.handle.flush()
    })
    slot.path = null
    slot.kind = 0
    slot.orphan = false
    slot.life++
    this.free.push(slot)
  }

  /** Takes a free slot for `path`. */
  #take (path, kind) {
    const slot = this.free.pop()
    if (!slot) throw new WasiError(E.NOSPC, 'no free OPFS slot in this call (more files than the pool\'s reserve)')
    storage(() => slot.handle.truncate(HEADER))
    this.#claim(slot, path, kind)
    this.byPath.set(path, slot)
    return slot
  }

  #parentExists (path) {
    const cut = path.lastIndexOf('/')
    if (cut < 0) return true
    const s = this.stat(path.slice(0, cut))
    return s !== null && s.dir
  }

  stat (path) {
    if (path === '') return { dir: true, size: 0, mtimeMs: 0 }
    const slot = this.byPath.get(path)
    if (slot) return { dir: slot.kind === KIND_DIR, size: slot.kind === KIND_DIR ? 0 : storage(() => slot.handle.getSize()) - HEADER, mtimeMs: 0 }
    const prefix = `${path}/`
    for (const p of this.byPath.keys()) if (p.startsWith(prefix)) return { dir: true, size: 0, mtimeMs: 0 }
    return null
  }

  open (path, { create = false, exclusive = false, truncate = false } = {}) {
    let slot = this.byPath.get(path)
    if (slot) {
      if (create && exclusive) throw new WasiError(E.EXIST)
      if (slot.kind === KIND_DIR) throw new WasiError(E.ISDIR)
      if (truncate) storage(() => slot.handle.truncate(HEADER))
    } else {
      if (this.stat(path)) throw new WasiError(E.ISDIR)
      if (!create) throw new WasiError(E.NOENT)
      if (!this.#parentExists(path)) throw new WasiError(E.NOENT)
      slot = this.#take(path, KIND_FILE)
    }
    return this.#file(slot)
  }

  /** A handle on `slot`'s bytes, as `wasi.js` uses an open file. */
  #file (slot) {
    slot.open++
    // A descriptor follows its file through renames; once the slot is freed it reads nothing.
    const life = slot.life
    const live = () => {
      if (slot.life !== life) throw new WasiError(E.BADF, 'the file was removed')
      return slot.handle
    }
    let closed = false
    return {
      read: (view, at) => storage(() => live().read(view, { at: HEADER + at })),
      write: (view, at) => storage(() => {
        const n = live().write(view, { at: HEADER + at })
        if (n < view.length) throw new WasiError(E.NOSPC, 'the origin\'s storage quota is used up')
        return n
      }),
      size: () => storage(() => live().getSize() - HEADER),
      truncate: (n) => storage(() => live().truncate(HEADER + n)),
      flush: () => storage(() => live().flush()),
      close: () => {
        if (closed) return
        closed = true
        slot.open--
        if (slot.orphan && slot.open === 0 && slot.life === life) this.#release(slot)
      },
    }
  }

  mkdir (path) {
    if (this.stat(path)) throw new WasiError(E.EXIST)
    if (!this.#parentExists(path)) throw new WasiError(E.NOENT)
    this.#take(path, KIND_DIR)
  }

  rmdir (path) {
    const s = this.stat(path)
    if (!s) throw new WasiError(E.NOENT)
    if (!s.dir) throw new WasiError(E.NOTDIR)
    if (this.list(path).length) throw new WasiError(E.NOTEMPTY)
    const slot = this.byPath.get(path)
    if (slot) this.#drop(slot)
  }

  unlink (path) {
    const slot = this.byPath.get(path)
    if (!slot) throw new WasiError(this.stat(path) ? E.ISDIR : E.NOENT)
    if (slot.kind === KIND_DIR) throw new WasiError(E.ISDIR)
    this.#drop(slot)
  }

  /** Removes `slot`'s path; its bytes stay while a descriptor still reads them (POSIX). */
  #drop (slot) {
    this.byPath.delete(slot.path)
    this.#forsake(slot)
  }

  /** Frees `slot`, or, while a descriptor still reads it (POSIX), clears its header now (a
   * crash frees it) and frees it at the last close. */
  #forsake (slot) {
    if (slot.open > 0) {
      storage(() => {
        slot.handle.write(new Uint8Array(24), { at: 0 })
        slot.handle.flush()
      })
      slot.path = null
      slot.orphan = true
    } else this.#release(slot)
  }

  rename (from, to) {
    const slot = this.byPath.get(from)
    if (!slot) throw new WasiError(this.stat(from) ? E.NOTSUP : E.NOENT)
    if (from === to) return
    const old = this.byPath.get(to)
    if (old && old.kind !== slot.kind) throw new WasiError(old.kind === KIND_DIR ? E.ISDIR : E.NOTDIR)
    if (slot.kind === KIND_DIR && [...this.byPath.keys()].some((p) => p.startsWith(`${from}/`))) throw new WasiError(E.NOTSUP)
    if (!this.#parentExists(to)) throw new WasiError(E.NOENT)
    // The new name first, at a later generation, flushed; then the replaced file freed.
    this.#claim(slot, to, slot.kind)
    this.byPath.delete(from)
    this.byPath.set(to, slot)
    if (old) this.#forsake(old)
  }

  list (path) {
    const prefix = path === '' ? '' : `${path}/`
    const names = new Set()
    for (const p of this.byPath.keys()) {
      if (p.startsWith(prefix) && p.length > prefix.length) names.add(p.slice(prefix.length).split('/')[0])
    }
    return [...names].sort()
  }

  /** Bytes the store's files hold (headers not counted). */
  usage () {
    let n = 0
    for (const slot of this.byPath.values()) if (slot.kind === KIND_FILE) n += storage(() => slot.handle.getSize()) - HEADER
    return n
  }

  /** Releases every handle and the lock. */
  close () {
    for (const slot of this.slots) {
      try {
        slot.handle.close()
      } catch {}
    }
    this.slots = []
    try {
      this.lock.close()
    } catch {}
  }
}

/** Read-only files held in memory (a model's folder), as a file system for `wasi.js`. */
export class MemoryFiles {
  /** `files` maps a relative path to its bytes (a Uint8Array). */
  constructor (files) {
    this.files = new Map(Object.entries(files))
  }

  stat (path) {
    const f = this.files.get(path)
    if (f) return { dir: false, size: f.length, mtimeMs: 0 }
    if (path === '' || [...this.files.keys()].some((p) => p.startsWith(`${path}/`))) return { dir: true, size: 0, mtimeMs: 0 }
    return null
  }

  open (path, { create = false, truncate = false } = {}) {
    const f = this.files.get(path)
    if (!f) throw new WasiError(create ? E.ROFS : E.NOENT)
    if (truncate) throw new WasiError(E.ROFS)
    return {
      read: (view, at) => {
        const part = f.subarray(Math.min(at, f.length), Math.min(at + view.length, f.length))
        view.set(part)
        return part.length
      },
      write: () => {
        throw new WasiError(E.ROFS)
      },
      size: () => f.length,
      truncate: () => {
        throw new WasiError(E.ROFS)
      },
      flush: () => {},
      close: () => {},
    }
  }

  mkdir () {
    throw new WasiError(E.ROFS)
  }

  rmdir () {
    throw new WasiError(E.ROFS)
  }

  unlink () {
    throw new WasiError(E.ROFS)
  }

  rename () {
    throw new WasiError(E.ROFS)
  }

  list (path) {
    const prefix = path === '' ? '' : `${path}/`
    const names = new Set()
    for (const p of this.files.keys()) if (p.startsWith(prefix)) names.add(p.slice(prefix.length).split('/')[0])
    return [...names].sort()
  }
}
