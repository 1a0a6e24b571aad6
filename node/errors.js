'use strict'
// The errors every memloop call throws: one class per engine error code (the same codes as
// the C library's status and Python's exceptions), all `MemloopError`s.

class MemloopError extends Error {
  constructor(message, code, options) {
    super(message, options)
    this.name = new.target.name
    /** The engine's error code: `invalid_input`, `not_found`, `locked`, … */
    this.code = code
  }
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
// end of generated

/** The error class of each code, each a kind of its parent's class or of `MemloopError`. */
const classes = {}
for (const [code, name, parent] of TABLE) {
  const base = parent ? classes[parent] : MemloopError
  classes[code] = { [name]: class extends base {} }[name]
}

const PREFIX = /^memloop:([a-z_]+): ([\s\S]*)$/

/** The error `e` from the native addon as a `MemloopError` subclass; other errors as they are. */
function typed(e) {
  if (e instanceof MemloopError || !(e instanceof Error)) return e
  const m = PREFIX.exec(e.message)
  if (m && classes[m[1]]) return new classes[m[1]](m[2], m[1], { cause: e })
  // napi's own conversion of an argument of the wrong type: bad input, never a crash.
  if (e.code === 'InvalidArg' || e.code === 'NumberExpected' || e.code === 'StringExpected' ||
      e.code === 'ObjectExpected' || e.code === 'ArrayExpected' || e.code === 'BooleanExpected' ||
      e.code === 'BigintExpected' || e.code === 'FunctionExpected' || e instanceof TypeError) {
    return new classes.invalid_input(e.message, 'invalid_input', { cause: e })
  }
  return e
}

module.exports = { MemloopError, typed, ...Object.fromEntries(TABLE.map(([code, name]) => [name, classes[code]])) }
