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

const classes = {}
const names = {
  invalid_input: 'InvalidInputError',
  not_found: 'NotFoundError',
  locked: 'LockedError',
  model_mismatch: 'ModelMismatchError',
  corrupt: 'CorruptError',
  unsupported_version: 'UnsupportedVersionError',
  io: 'StorageIOError',
  store: 'StoreError',
  index: 'VectorIndexError',
  embed: 'EmbedError',
  poisoned: 'PoisonedError',
  background: 'BackgroundError',
  key: 'StoreKeyError',
  panic: 'PanicError',
}
for (const [code, name] of Object.entries(names)) {
  classes[code] = { [name]: class extends MemloopError {} }[name]
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

module.exports = { MemloopError, typed, ...Object.fromEntries(Object.values(names).map((n, i) => [n, classes[Object.keys(names)[i]]])) }
