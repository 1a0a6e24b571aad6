// Shared by the suites: a fresh store directory, and the package as an installed user has it.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export { Memory, MemloopError, InvalidInputError, NotFoundError, LockedError } from 'memloop'

/** A new, empty directory for a store. */
export function freshDir(name = 'store') {
  return join(mkdtempSync(join(tmpdir(), 'memloop-node-')), name)
}
