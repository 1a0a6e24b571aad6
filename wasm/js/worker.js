// The dedicated Worker that runs one memloop store in the browser: memloop's WebAssembly
// build (the C ABI of memloop-ffi) over WASI (`wasi.js`), its store's folder in the Origin
// Private File System (`opfs.js`), the model's files fetched from the page's own origin,
// sha256-checked and cached in OPFS. The page talks to it by messages (`memloop.js`), so no
// call blocks the page's thread. One request at a time: a message waits for the one before.

import { Wasi, WasiExit } from './wasi.js'
import { OpfsFolder, MemoryFiles, StoreLockedError } from './opfs.js'

/** The error codes of memloop's status codes (`MEMLOOP_ERR_*`), by status. */
const CODES = [null, 'invalid_input', 'not_found', 'locked', 'model_mismatch', 'corrupt',
  'unsupported_version', 'io', 'store', 'index', 'embed', 'callback', 'panic', 'poisoned',
  'background', 'key']

/** An error sent back to the page with the engine's code. */
class Refusal extends Error {
  constructor (code, message) {
    super(message)
    this.code = code
  }
}

let state = null // { exports, wasi, folder, handle, modelDir }
let dead = null // why the instance can no longer run (a trap)

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** `s` copied into the instance's memory as a NUL-terminated string; free with `free`. */
function cString (exports, s) {
  const bytes = encoder.encode(s)
  const ptr = exports.memloop_alloc(bytes.length + 1)
  if (!ptr) throw new Refusal('invalid_input', 'the request does not fit in WebAssembly memory')
  const mem = new Uint8Array(exports.memory.buffer)
  mem.set(bytes, ptr)
  mem[ptr + bytes.length] = 0
  return { ptr, free: () => exports.memloop_dealloc(ptr, bytes.length + 1) }
}

/** The NUL-terminated string at `ptr`. */
function readString (exports, ptr) {
  const mem = new Uint8Array(exports.memory.buffer)
  let end = ptr
  while (mem[end] !== 0) end++
  return decoder.decode(mem.subarray(ptr, end))
}

/** Runs `f` (a call into the instance); a trap ends the instance and is reported as a panic. */
function guarded (f) {
  if (dead) throw new Refusal('panic', `the store's WebAssembly instance ended (${dead}); open the store again`)
  try {
    return f()
  } catch (e) {
    if (e instanceof Refusal) throw e
    if (e instanceof WebAssembly.RuntimeError || e instanceof WasiExit) {
      dead = e.message
      // The files stay as the last flush left them; a new open reads them.
      try { state && state.folder.close() } catch {}
      throw new Refusal('panic', `memloop stopped: ${e.message}`)
    }
    throw e
  }
}

/** The status of a call, as a thrown `Refusal` unless it is `MEMLOOP_OK`. */
function check (exports, status) {
  if (status === 0) return
  const message = readString(exports, exports.memloop_last_error())
  throw new Refusal(CODES[status] || 'io', message)
}

/** Calls `f(outPtr)`, a C function writing a JSON string through `outPtr`; its parsed value. */
function jsonOut (exports, f) {
  const out = exports.memloop_alloc(4)
  try {
    new DataView(exports.memory.buffer).setUint32(out, 0, true)
    check(exports, f(out))
    const ptr = new DataView(exports.memory.buffer).getUint32(out, true)
    if (!ptr) return null
    const text = readString(exports, ptr)
    exports.memloop_free_string(ptr)
    return JSON.parse(text)
  } finally {
    exports.memloop_dealloc(out, 4)
  }
}

/** sha256 of `bytes`, lowercase hex. */
async function sha256 (bytes) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))
  return [...d].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/** A URL of the page's own origin, or a refusal: nothing is fetched from anywhere else. */
function sameOrigin (url) {
  const u = new URL(url, self.location.href)
  if (u.origin !== self.location.origin) throw new Refusal('invalid_input', `${u.href}: the model is fetched from the page's own origin only (${self.location.origin})`)
  return u
}

/** The Cache Storage that keeps memloop.wasm for loads without a network. */
const WASM_CACHE = 'memloop-wasm'

/**
 * memloop.wasm compiled: fetched when the network answers (and kept in Cache Storage), else
 * the copy kept from an earlier load, so a store opens offline whether or not the page has a
 * service worker (the model's files are kept in OPFS, `loadModel`). With a kept copy, a
 * network that stalls is given NETWORK_WAIT_MS.
 */
async function wasmModule (url) {
  let cache = null
  try {
    cache = await caches.open(WASM_CACHE)
  } catch {} // no Cache Storage (an insecure context): the network alone
  const kept = cache ? await cache.match(url).catch(() => undefined) : undefined
  try {
    const res = await fetch(url, kept ? { signal: AbortSignal.timeout(NETWORK_WAIT_MS) } : {})
    if (!res.ok) throw new Refusal('io', `${url.href}: HTTP ${res.status}`)
    if (!cache) return await WebAssembly.compileStreaming(res)
    const copy = res.clone()
    const [module] = await Promise.all([
      WebAssembly.compileStreaming(res),
      cache.put(url, copy).catch(() => {}), // a cache that cannot be written (the quota): still compiled
    ])
    return module
  } catch (e) {
    // No network, a stalled one, or a body cut off: the kept copy, if any.
    if (kept) return WebAssembly.compileStreaming(kept)
    throw e instanceof Refusal ? e : new Refusal('io', `${url.href}: ${e.message} (and no copy kept from an earlier load)`)
  }
}

/** How long memloop.wasm or a model's manifest is waited for when a copy kept from an earlier load can stand in, in ms. */
const NETWORK_WAIT_MS = 5000

/**
 * The model's files: its manifest (`model.json`: `{"name", "files": {"config.json": sha256,
 * …}}`) from `url`, then each file from OPFS's cache (`memloop-models/<sha256>`) when it is
 * there and its sha256 holds, else fetched from `url` and cached. Progress is posted as
 * `{progress: {phase: "model", done, total}}` messages.
 */
async function loadModel (url, id) {
  const base = sameOrigin(url.endsWith('/') ? url : `${url}/`)
  const root = await navigator.storage.getDirectory()
  const cache = await root.getDirectoryHandle('memloop-models', { create: true })
  // The manifest is fetched each time (a new model replaces the old) and kept in OPFS: offline,
  // the kept one names the cached files. With a kept one, a network that stalls (connected but
  // answering nothing) is given NETWORK_WAIT_MS, not forever.
  const kept = `manifest-${(await sha256(encoder.encode(base.href))).slice(0, 32)}.json`
  let hasKept = false
  try {
    await cache.getFileHandle(kept)
    hasKept = true
  } catch {}
  let manifest
  try {
    const res = await fetch(new URL('model.json', base), hasKept ? { signal: AbortSignal.timeout(NETWORK_WAIT_MS) } : {})
    if (!res.ok) throw new Refusal('embed', `${base.href}model.json: HTTP ${res.status}`)
    manifest = await res.json()
  } catch (e) {
    try {
      manifest = JSON.parse(await (await (await cache.getFileHandle(kept)).getFile()).text())
    } catch {
      throw e instanceof Refusal ? e : new Refusal('embed', `${base.href}model.json: ${e.message} (and no copy kept from an earlier load)`)
    }
  }
  if (!manifest || typeof manifest.name !== 'string' || !/^[\w.+-]+$/.test(manifest.name) || !manifest.files || typeof manifest.files !== 'object') {
    throw new Refusal('embed', `${base.href}model.json: not a model manifest`)
  }
  await writeCached(cache, kept, encoder.encode(JSON.stringify(manifest)))
  const files = {}
  const names = Object.keys(manifest.files)
  for (const [i, name] of names.entries()) {
    const want = String(manifest.files[name]).toLowerCase()
    if (!/^[0-9a-f]{64}$/.test(want) || !/^\w[\w.-]*$/.test(name)) throw new Refusal('embed', `model.json: bad entry ${name}`)
    let bytes = null
    try {
      const cached = await (await cache.getFileHandle(want)).getFile()
      const b = new Uint8Array(await cached.arrayBuffer())
      if (await sha256(b) === want) bytes = b
    } catch {}
    if (!bytes) {
      const res = await fetch(new URL(name, base))
      if (!res.ok) throw new Refusal('embed', `${name}: HTTP ${res.status}`)
      bytes = new Uint8Array(await res.arrayBuffer())
      const got = await sha256(bytes)
      if (got !== want) throw new Refusal('embed', `${name}: sha256 ${got}, the manifest says ${want}`)
      await writeCached(cache, want, bytes)
    }
    files[name] = bytes
    postMessage({ id, progress: { phase: 'model', done: i + 1, total: names.length } })
  }
  return { name: manifest.name, files }
}

/** Writes `bytes` to the file `name` of the cache folder; a cache that cannot be written
 * (the quota, another tab writing it) is left as it is: the model still loads. */
async function writeCached (cache, name, bytes) {
  try {
    const h = await (await cache.getFileHandle(name, { create: true })).createSyncAccessHandle()
    try {
      h.truncate(0)
      h.write(bytes, { at: 0 })
      h.flush()
    } finally {
      h.close()
    }
  } catch {}
}

/** The store's OPFS folder: `memloop/<name>`. */
async function storeFolder (name) {
  if (typeof name !== 'string' || !/^[\w.-]{1,128}$/.test(name) || name === '.' || name === '..') {
    throw new Refusal('invalid_input', `store name ${JSON.stringify(name)}: 1 to 128 letters, digits, '_', '-' or '.'`)
  }
  const root = await navigator.storage.getDirectory()
  const all = await root.getDirectoryHandle('memloop', { create: true })
  return all.getDirectoryHandle(name, { create: true })
}

const handlers = {
  async open ({ name, options = {}, wasmUrl, modelUrl }, id) {
    if (state) throw new Refusal('invalid_input', 'this worker holds a store already')
    const module = await wasmModule(sameOrigin(wasmUrl))
    const dir = await storeFolder(name)
    let folder
    try {
      folder = await OpfsFolder.open(dir, { name })
    } catch (e) {
      if (e instanceof StoreLockedError) throw new Refusal('locked', e.message)
      throw e
    }
    try {
      const mounts = { '/store': folder }
      const request = { ...options }
      let modelDir = null
      if (request.hashing_embedder === undefined && request.model === undefined) {
        const model = await loadModel(modelUrl, id)
        mounts['/models'] = new MemoryFiles(Object.fromEntries(Object.entries(model.files).map(([f, b]) => [`${model.name}/${f}`, b])))
        modelDir = `/models/${model.name}`
        request.model = modelDir
      } else if (request.model !== undefined) {
        throw new Refusal('invalid_input', 'options.model: in the browser the model comes from modelUrl')
      }
      const wasi = new Wasi({ mounts })
      const instance = await WebAssembly.instantiate(module, wasi.importsFor(module))
      const exports = instance.exports
      wasi.bind(exports.memory)
      if (exports._initialize) exports._initialize()
      state = { exports, wasi, folder, handle: 0, modelDir }
      const path = cString(exports, '/store')
      const json = cString(exports, JSON.stringify(request))
      const out = exports.memloop_alloc(4)
      try {
        guarded(() => check(exports, exports.memloop_open(path.ptr, json.ptr, 0, out)))
        state.handle = new DataView(exports.memory.buffer).getUint32(out, true)
      } finally {
        path.free()
        json.free()
        exports.memloop_dealloc(out, 4)
      }
      await folder.topUp()
      return { model: modelDir }
    } catch (e) {
      state = null
      folder.close()
      throw e
    }
  },

  async call ({ op, request }) {
    const s = opened()
    const name = cString(s.exports, op)
    const json = cString(s.exports, JSON.stringify(request ?? {}))
    try {
      return guarded(() => jsonOut(s.exports, (out) => s.exports.memloop_call(s.handle, name.ptr, json.ptr, out)))
    } finally {
      if (!dead) {
        name.free()
        json.free()
        await s.folder.topUp()
      }
    }
  },

  async embed ({ texts, precision }) {
    const s = opened()
    if (!s.modelDir) throw new Refusal('invalid_input', 'embed needs the model (the store was opened with the test embedder)')
    const dir = cString(s.exports, s.modelDir)
    const p = cString(s.exports, precision || 'f32')
    const t = cString(s.exports, JSON.stringify(texts))
    try {
      const answer = guarded(() => {
        const ptr = s.exports.memloop_wasm_embed(dir.ptr, p.ptr, t.ptr)
        if (!ptr) throw new Refusal('embed', 'out of memory')
        const text = readString(s.exports, ptr)
        s.exports.memloop_free_string(ptr)
        return JSON.parse(text)
      })
      if (answer.error) throw new Refusal(answer.error.code, answer.error.message)
      return answer
    } finally {
      if (!dead) {
        dir.free()
        p.free()
        t.free()
      }
    }
  },

  async usage () {
    const s = opened()
    return { bytes: s.folder.usage(), estimate: await navigator.storage.estimate() }
  },

  async close () {
    if (!state) return null
    const s = state
    state = null
    try {
      if (!dead) guarded(() => check(s.exports, s.exports.memloop_close(s.handle)))
    } finally {
      if (!dead) s.folder.close()
    }
    return null
  },
}

function opened () {
  if (!state) throw new Refusal('invalid_input', 'the store is closed')
  return state
}

let queue = Promise.resolve()

self.onmessage = ({ data }) => {
  const { id, op, args } = data || {}
  queue = queue.then(async () => {
    try {
      const handler = Object.hasOwn(handlers, op) ? handlers[op] : null
      if (!handler) throw new Refusal('invalid_input', `unknown worker request ${op}`)
      postMessage({ id, result: await handler(args || {}, id) })
    } catch (e) {
      const code = e instanceof Refusal ? e.code : 'io'
      postMessage({ id, error: { code, message: String((e && e.message) || e) } })
    }
  })
}
