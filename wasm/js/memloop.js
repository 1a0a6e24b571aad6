// memloop in the browser: a store in the Origin Private File System, run by memloop's
// WebAssembly build in a dedicated Worker (`worker.js`), reached through the same operation
// registry and the same answers as every other door (`memory.call(op, request)`), with the
// Node package's methods on top. Every method returns a Promise; keys are camelCase (the
// registry's snake_case converted both ways); a failure rejects with the `MemloopError`
// subclass of the engine's error code.
//
//   import { Memory } from 'memloop-wasm'
//   const mem = await Memory.open('notes')
//   await mem.remember({ text: 'The staging database listens on port 5433.' })
//   const hits = await mem.recall('which port does staging use?', { k: 3 })

/** Every error memloop rejects with: `code` is the engine's error code. */
export class MemloopError extends Error {
  constructor (message, code, options) {
    super(message, options)
    this.name = new.target.name
    /** The engine's error code: `invalid_input`, `not_found`, `locked`, … */
    this.code = code
  }
}

/** The error classes of `table`'s `[code, class, parent code]` rows, by code: each a kind of its
 * parent's class or of `MemloopError`. */
function classesOf (table) {
  const classes = {}
  for (const [code, name, parent] of table) {
    const base = parent ? classes[parent] : MemloopError
    classes[code] = { [name]: class extends base {} }[name]
  }
  return classes
}

// generated from the engine's error table (engine/src/error_code.rs) by `MEMLOOP_REGENERATE=1 cargo test -p memloop --test integration door_errors`: edit the table, not this
const TABLE = [
  ['invalid_input', 'InvalidInputError', null],
  ['not_found', 'NotFoundError', null],
  ['locked', 'LockedError', null],
  ['model_mismatch', 'ModelMismatchError', null],
  ['corrupt', 'CorruptError', null],
  ['unsupported_version', 'UnsupportedVersionError', null],
  ['io', 'StorageIOError', null],
  ['store', 'StoreError', null],
  ['index', 'VectorIndexError', null],
  ['embed', 'EmbedError', null],
  ['callback', 'CallbackError', null],
  ['panic', 'PanicError', null],
  ['poisoned', 'PoisonedError', 'store'],
  ['background', 'BackgroundError', 'store'],
  ['key', 'StoreKeyError', null],
]

/** The error class of each code. */
const CLASSES = classesOf(TABLE)

export const InvalidInputError = CLASSES.invalid_input
export const NotFoundError = CLASSES.not_found
export const LockedError = CLASSES.locked
export const ModelMismatchError = CLASSES.model_mismatch
export const CorruptError = CLASSES.corrupt
export const UnsupportedVersionError = CLASSES.unsupported_version
export const StorageIOError = CLASSES.io
export const StoreError = CLASSES.store
export const VectorIndexError = CLASSES.index
export const EmbedError = CLASSES.embed
export const CallbackError = CLASSES.callback
export const PanicError = CLASSES.panic
export const PoisonedError = CLASSES.poisoned
export const BackgroundError = CLASSES.background
export const StoreKeyError = CLASSES.key
// end of generated

function typed ({ code, message }) {
  return new (CLASSES[code] || MemloopError)(message, code)
}

const camel = (k) => k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase())
const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** `v` with every object key renamed by `rename` (a Date becomes ms since the epoch). */
function renamed (v, rename) {
  if (v instanceof Date) return v.getTime()
  if (Array.isArray(v)) return v.map((x) => renamed(x, rename))
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [rename(k), renamed(x, rename)]))
  return v
}

/** The worker's and the package's files, beside this module. */
const HERE = new URL('.', import.meta.url)

/** A store in this origin's private file system. Open with `Memory.open`. */
export class Memory {
  #worker
  #pending = new Map()
  #next = 1
  #closed = false

  /** Use `Memory.open`. */
  constructor (worker, name) {
    this.#worker = worker
    /** The store's name (its folder, `memloop/<name>` in OPFS). */
    this.name = name
    worker.onmessage = ({ data }) => {
      const p = this.#pending.get(data.id)
      if (!p) return
      if (data.progress) {
        if (p.onProgress) p.onProgress(data.progress)
        return
      }
      this.#pending.delete(data.id)
      if (data.error) p.reject(typed(data.error))
      else p.resolve(data.result)
    }
    worker.onerror = (e) => {
      for (const p of this.#pending.values()) p.reject(new PanicError(`the worker failed: ${e.message}`, 'panic'))
      this.#pending.clear()
    }
  }

  #send (op, args, onProgress) {
    if (this.#closed && op !== 'close') return Promise.reject(new InvalidInputError('the store is closed', 'invalid_input'))
    const id = this.#next++
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, onProgress })
      this.#worker.postMessage({ id, op, args })
    })
  }

  /**
   * Opens (creating if needed) the store `name` in this origin's private file system, in its
   * own Worker. `options`: the engine's open options in camelCase (`hashingEmbedder`,
   * `precision`, `dedupThreshold`, `capacity`, …), plus `modelUrl` (a folder of the page's
   * own origin holding `model.json` and the model's files: default the package's `model/`),
   * `wasmUrl` (default the package's `memloop.wasm`) and `onProgress` (called with
   * `{phase, done, total}` while the model loads). A store open in another tab rejects with a
   * `LockedError`, after waiting 3 seconds for it to be let go of (a reloaded page's old
   * Worker holds it until it is torn down).
   */
  static async open (name, options = {}) {
    const { modelUrl, wasmUrl, onProgress, ...engine } = options || {}
    const worker = new Worker(new URL('worker.js', HERE), { type: 'module', name: `memloop:${name}` })
    const mem = new Memory(worker, name)
    try {
      await mem.#send('open', {
        name,
        options: renamed(engine, snake),
        wasmUrl: String(wasmUrl || new URL('memloop.wasm', HERE)),
        modelUrl: String(modelUrl || new URL('model/', HERE)),
      }, onProgress)
    } catch (e) {
      worker.terminate()
      throw e
    }
    return mem
  }

  /**
   * Runs any operation of the registry (remember, update, remember_conversation, recall,
   * context, feedback, record_task, observe, get, list, forget, explain_decay, stats, sweep,
   * export, import) with its request; the answer every door gives, its keys camelCase.
   */
  async call (op, request = {}) {
    return renamed(await this.#send('call', { op: String(op), request: renamed(request, snake) }), camel)
  }

  /** Remembers one memory (a text, or `{text, kind, tags, user, validFrom, …}`): `{id, action, previous}`. */
  remember (memory) {
    return this.call('remember', typeof memory === 'string' ? { text: memory } : memory)
  }

  /** The memories best matching `query`, best first (`{k, strategy, kinds, tags, user, asOf, explain, …}`). */
  async recall (query, options = {}) {
    return (await this.call('recall', { ...options, query })).hits
  }

  /** A context under a token budget for `query` (`{budget, k, …}`): `{text, tokens, blocks, dropped}`. */
  context (query, options = {}) {
    return this.call('context', { ...options, query })
  }

  /** Changes memory `id` (`{text, tags, importance, validFrom, validUntil, …}`). */
  update (id, change = {}) {
    return this.call('update', { ...change, id })
  }

  /** Rates how much memory `id` helped: 1 harmful … 5 essential. */
  feedback (id, level, scope = {}) {
    return this.call('feedback', { ...scope, id, level })
  }

  /** Memory `id` with all its fields, or `null`. */
  async get (id, scope = {}) {
    try {
      return await this.call('get', { ...scope, id })
    } catch (e) {
      if (e instanceof NotFoundError) return null
      throw e
    }
  }

  /** A page of the memories a filter admits (`{user, kinds, limit, offset, asOf, …}`). */
  async list (filter = {}) {
    return (await this.call('list', filter)).memories
  }

  /** Deletes memory `id` for good. */
  async forget (id, scope = {}) {
    await this.call('forget', { ...scope, id })
  }

  /** Runs forgetting now: memories whose priority fell below the floor are archived or removed. */
  sweep (scope = {}) {
    return this.call('sweep', scope)
  }

  /** Counts and sizes of the store. */
  stats () {
    return this.call('stats', {})
  }

  /** Writes memories to `path` inside the store's folder (`{format, namespace, user, …}`). */
  export (path, options = {}) {
    return this.call('export', { ...options, path: `/store/${path}` })
  }

  /** Merges the export file `path` inside the store's folder. */
  import (path, format) {
    return this.call('import', format === undefined ? { path: `/store/${path}` } : { path: `/store/${path}`, format })
  }

  /**
   * The model's vectors for `texts` (documents' vectors, normalised), without storing them:
   * `{vectors, fingerprint}`; `precision` "f32" (default) or "int8".
   */
  embed (texts, { precision = 'f32' } = {}) {
    return this.#send('embed', { texts, precision })
  }

  /** Bytes the store's files hold in OPFS, and the origin's quota (`navigator.storage.estimate()`). */
  usage () {
    return this.#send('usage', {})
  }

  /** Saves the index, makes every write durable and releases the store (and its Worker). */
  async close () {
    if (this.#closed) return
    this.#closed = true
    try {
      await this.#send('close', {})
    } finally {
      this.#worker.terminate()
    }
  }

  /** `await using mem = await Memory.open(name)` closes the store at the end of the block. */
  [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')] () {
    return this.close()
  }
}
