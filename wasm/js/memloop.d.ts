/// <reference lib="esnext.disposable" />
// memloop in the browser: a store in the Origin Private File System, run by memloop's
// WebAssembly build in a dedicated Worker. Every method returns a Promise; keys are camelCase;
// failures reject with the `MemloopError` subclass of the engine's error code.

/** Every error memloop rejects with. */
export class MemloopError extends Error {
  /** The engine's error code: `invalid_input`, `not_found`, `locked`, `io`, … */
  readonly code: string
}
// generated from the engine's error table (engine/src/error_code.rs) by `MEMLOOP_REGENERATE=1 cargo test -p memloop --test integration door_errors`: edit the table, not this
/** A wrong argument: empty text, a bad value, an unknown field or operation, a closed store; nothing changed. */
export class InvalidInputError extends MemloopError {}
/** No memory has the given id (in the caller's scope). */
export class NotFoundError extends MemloopError {}
/** Another process holds the store open. */
export class LockedError extends MemloopError {}
/** The store was built with another embedding model. */
export class ModelMismatchError extends MemloopError {}
/** A file of the store is damaged: refused before it was believed. */
export class CorruptError extends MemloopError {}
/** A file was written by a newer memloop. */
export class UnsupportedVersionError extends MemloopError {}
/** The file system refused a read or a write. */
export class StorageIOError extends MemloopError {}
/** The embedded database failed. */
export class StoreError extends MemloopError {}
/** The vector index failed. */
export class VectorIndexError extends MemloopError {}
/** The embedding model failed or could not be loaded. */
export class EmbedError extends MemloopError {}
/** A caller's callback (a reranker, refiner, summarizer or token counter) failed; the cause is its error. */
export class CallbackError extends MemloopError {}
/** memloop hit an internal bug, reported instead of crashing: stored data is unharmed and the store stays usable. */
export class PanicError extends MemloopError {}
/** A commit failed and the database could not be reopened for writing yet (a full disk): reads go on, writes are refused until storage recovers. */
export class PoisonedError extends StoreError {}
/** The background thread's last checkpoint or flush failed. */
export class BackgroundError extends StoreError {}
/** The store is encrypted and its key file is missing, wrong or damaged, or a passphrase is wrong; nothing was written. */
export class StoreKeyError extends MemloopError {}
// end of generated

/** Options of `Memory.open`: the engine's open options, camelCase, and where the files come from. */
export interface OpenOptions {
  /** A folder of the page's own origin with `model.json` and the model's files (default: the package's `model/`). */
  modelUrl?: string | URL
  /** memloop's WebAssembly module (default: the package's `memloop.wasm`). */
  wasmUrl?: string | URL
  /** Called while the model loads: `{phase: "model", done, total}` files. */
  onProgress?: (progress: { phase: string; done: number; total: number }) => void
  /** A model-free test embedder of this dimension (no model is fetched). */
  hashingEmbedder?: number
  /** The encoder's matrix products: "f32" or "int8". */
  precision?: 'f32' | 'int8'
  /** Every write flushed before it is acknowledged (default true). */
  sync?: boolean
  /** Cosine at which near-duplicates merge; null for exact duplicates only. */
  dedupThreshold?: number | null
  /** Most memories kept. */
  capacity?: number
  /** How the index stores vectors: "f32", "bf16" or "int8". */
  indexVectors?: 'f32' | 'bf16' | 'int8'
  /** "system" (default) or "manual". */
  clock?: 'system' | 'manual'
  /** A manual clock's start, ms since the Unix epoch. */
  startMs?: number
  /** Any other engine option, camelCase. */
  [option: string]: unknown
}

/** What `remember` did. */
export interface Remembered {
  id: number
  action: 'new' | 'merged' | 'superseded'
  previous: number | null
}

/** A memory to remember. */
export interface RememberInput {
  text: string
  kind?: string
  namespace?: string
  tags?: string[]
  importance?: number
  user?: string
  agent?: string
  session?: string
  validFrom?: number | Date | string
  validUntil?: number | Date | string
  [field: string]: unknown
}

/** A memory with all its fields. */
export interface Item {
  id: number
  text: string
  kind: string
  tags: string[]
  [field: string]: unknown
}

/** One recalled memory. */
export interface Hit {
  id: number
  score: number
  rank: number
  text: string
  kind: string
  item: Item
  explain?: Record<string, unknown>
  [field: string]: unknown
}

/** A context under a token budget. */
export interface Context {
  text: string
  tokens: number
  blocks: { label: string; id: number; precision: string; text: string; score: number }[]
  dropped: number[]
  [field: string]: unknown
}

/** Recall and context options (the registry's fields, camelCase). */
export interface QueryOptions {
  k?: number
  strategy?: 'single' | 'lexical' | 'rerank' | 'iterative'
  kinds?: string[]
  tags?: string[]
  namespace?: string
  user?: string
  agent?: string
  session?: string
  asOf?: number | Date | string
  explain?: boolean
  history?: boolean
  budget?: number
  [field: string]: unknown
}

/** A user's, agent's or session's scope. */
export interface ScopeOptions {
  user?: string
  agent?: string
  session?: string
}

/** A store in this origin's private file system, run in its own Worker. */
export class Memory {
  /** The store's name: its folder, `memloop/<name>` in OPFS. */
  readonly name: string
  /** Opens (creating if needed) the store `name`; a `LockedError` when another tab holds it (after 3 seconds' wait: a reloaded page's old Worker lets go of it as it is torn down). */
  static open(name: string, options?: OpenOptions): Promise<Memory>
  /** Runs any operation of the registry with its request; the answer every door gives, camelCase. */
  call(op: string, request?: Record<string, unknown>): Promise<any>
  remember(memory: string | RememberInput): Promise<Remembered>
  recall(query: string, options?: QueryOptions): Promise<Hit[]>
  context(query: string, options?: QueryOptions): Promise<Context>
  update(id: number, change: Partial<RememberInput>): Promise<Record<string, unknown>>
  feedback(id: number, level: 1 | 2 | 3 | 4 | 5, scope?: ScopeOptions): Promise<Record<string, unknown>>
  get(id: number, scope?: ScopeOptions): Promise<Item | null>
  list(filter?: QueryOptions & { limit?: number; offset?: number }): Promise<Item[]>
  forget(id: number, scope?: ScopeOptions): Promise<void>
  sweep(scope?: ScopeOptions): Promise<Record<string, unknown>>
  stats(): Promise<Record<string, unknown>>
  /** Writes memories to `path` inside the store's folder. */
  export(path: string, options?: Record<string, unknown>): Promise<Record<string, unknown>>
  /** Merges the export file `path` inside the store's folder. */
  import(path: string, format?: 'mlx' | 'arrow' | 'parquet'): Promise<Record<string, unknown>>
  /** The model's vectors for `texts` (normalised), without storing them. */
  embed(texts: string[], options?: { precision?: 'f32' | 'int8' }): Promise<{ vectors: number[][]; fingerprint: string }>
  /** Bytes the store holds in OPFS and the origin's usage and quota. */
  usage(): Promise<{ bytes: number; estimate: { usage?: number; quota?: number } }>
  /** Saves the index, makes every write durable, releases the store and its Worker. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}
