/** An error from memloop; `code` is the engine's error code, the same as C's and Python's. */
export declare class MemloopError extends Error {
  readonly code: string
}
/** A wrong argument: empty text, a bad value, an unknown field, a closed store. */
export declare class InvalidInputError extends MemloopError {}
/** No such memory (in the caller's scope). */
export declare class NotFoundError extends MemloopError {}
/** Another process holds the store. */
export declare class LockedError extends MemloopError {}
/** The store was made with another model. */
export declare class ModelMismatchError extends MemloopError {}
/** A damaged file, refused before it was believed. */
export declare class CorruptError extends MemloopError {}
/** A file from a newer memloop. */
export declare class UnsupportedVersionError extends MemloopError {}
/** The file system refused a read or a write. */
export declare class StorageIOError extends MemloopError {}
/** The database failed. */
export declare class StoreError extends MemloopError {}
/** The vector index failed. */
export declare class VectorIndexError extends MemloopError {}
/** The embedding model failed or is missing. */
export declare class EmbedError extends MemloopError {}
/** A write failed halfway before; reopen the store. */
export declare class PoisonedError extends MemloopError {}
/** The background checkpoint or flush failed. */
export declare class BackgroundError extends MemloopError {}
/** The store is encrypted and its key file is missing, wrong or damaged, or the passphrase is wrong; nothing was written. */
export declare class StoreKeyError extends MemloopError {}
/** memloop panicked: a bug, reported instead of crashing the process. */
export declare class PanicError extends MemloopError {}
