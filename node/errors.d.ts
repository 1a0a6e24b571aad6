/** An error from memloop; `code` is the engine's error code, the same as C's and Python's. */
export declare class MemloopError extends Error {
  readonly code: string
}
// generated from the engine's error table (engine/src/error_code.rs) by `MEMLOOP_REGENERATE=1 cargo test -p memloop --test integration door_errors`: edit the table, not this
/** A wrong argument: empty text, a bad value, an unknown field or operation, a closed store; nothing changed. */
export declare class InvalidInputError extends MemloopError {}
/** No memory has the given id (in the caller's scope). */
export declare class NotFoundError extends MemloopError {}
/** Another process holds the store open. */
export declare class LockedError extends MemloopError {}
/** The store was built with another embedding model. */
export declare class ModelMismatchError extends MemloopError {}
/** A file of the store is damaged: refused before it was believed. */
export declare class CorruptError extends MemloopError {}
/** A file was written by a newer memloop. */
export declare class UnsupportedVersionError extends MemloopError {}
/** The file system refused a read or a write. */
export declare class StorageIOError extends MemloopError {}
/** The embedded database failed. */
export declare class StoreError extends MemloopError {}
/** The vector index failed. */
export declare class VectorIndexError extends MemloopError {}
/** The embedding model failed or could not be loaded. */
export declare class EmbedError extends MemloopError {}
/** A caller's callback (a reranker, refiner, summarizer or token counter) failed; the cause is its error. */
export declare class CallbackError extends MemloopError {}
/** memloop hit an internal bug, reported instead of crashing: stored data is unharmed and the store stays usable. */
export declare class PanicError extends MemloopError {}
/** A commit failed and the database could not be reopened for writing yet (a full disk): reads go on, writes are refused until storage recovers. */
export declare class PoisonedError extends StoreError {}
/** The background thread's last checkpoint or flush failed. */
export declare class BackgroundError extends StoreError {}
/** The store is encrypted and its key file is missing, wrong or damaged, or a passphrase is wrong; nothing was written. */
export declare class StoreKeyError extends MemloopError {}
// end of generated
