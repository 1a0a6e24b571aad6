// An encrypted store from Node: keyFile / passphrase, a typed StoreKeyError, erasure with its
// signed receipt.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { Memory, freshDir } from './helpers.mjs'
import { InvalidInputError, StoreKeyError } from 'memloop'

test('an encrypted store needs its key file, and erasing a user signs a receipt', async () => {
  const dir = freshDir()
  const keyFile = join(dirname(dir), 'mem.key')
  const mem = await Memory.open(dir, { hashingEmbedder: 64, keyFile })
  await mem.remember({ text: "Ana's locker code is 7731", user: 'ana' })
  await mem.remember({ text: 'Bob prefers the window seat', user: 'bob' })
  await mem.close()
  assert.ok(existsSync(keyFile))
  for (const f of readdirSync(dir)) {
    assert.ok(!readFileSync(join(dir, f)).includes('locker'), f)
  }
  await assert.rejects(Memory.open(dir, { hashingEmbedder: 64 }), StoreKeyError)
  await assert.rejects(Memory.open(dir, { hashingEmbedder: 64, keyFile, passphrase: 'nope' }), StoreKeyError)
  const again = await Memory.open(dir, { hashingEmbedder: 64, keyFile })
  const erased = await again.eraseScope({ user: 'ana' })
  assert.equal(erased.receipt.user, 'ana')
  assert.match(erased.receipt.destroyedKey, /^[0-9a-f]{16}$/)
  // The signed bytes, to keep and verify (`memloop receipt verify`).
  const line = JSON.parse(erased.receiptLine)
  assert.equal(line.destroyed_key, erased.receipt.destroyedKey)
  assert.ok(erased.receiptLine.endsWith('\n'))
  const hits = await again.recall('seat', { user: 'bob' })
  assert.equal(hits[0].item.text, 'Bob prefers the window seat')
  await again.close()
})

// Under Wine (scripts/test-windows.sh --npm) icacls is a stub: the carried key file stays open
// to others there, and memloop rightly refuses it.
const wineIcacls = process.platform === 'win32' && process.env.MEMLOOP_UNDER_WINE === '1'
test('two devices sync through a shared folder', { skip: wineIcacls && "Wine's icacls cannot make the carried key private" }, async () => {
  const dir = freshDir()
  const root = dirname(dir)
  const remote = pathToFileURL(join(root, 'shared')).href
  const keyFile = join(root, 'a.key')
  const a = await Memory.open(join(root, 'a'), { hashingEmbedder: 64, keyFile })
  await a.remember({ text: "Ana's locker code is 7731", user: 'ana' })
  const pushed = await a.sync(remote)
  assert.equal(pushed.pushed, 1)
  assert.equal(pushed.pulledSegments, 0)
  await a.close()
  // The other device's key file: the same ring, carried by hand.
  const keyB = join(root, 'b.key')
  writeFileSync(keyB, readFileSync(keyFile), { mode: 0o600 })
  if (process.platform === 'win32') {
    // Windows ignores the mode: the file inherits its folder's ACL, which memloop refuses for a
    // key. What its error says to run makes the file this user's alone.
    execFileSync('icacls', [keyB, '/inheritance:r', '/grant:r', `${process.env.USERNAME}:F`])
  }
  const b = await Memory.open(join(root, 'b'), { hashingEmbedder: 64, keyFile: keyB })
  const pulled = await b.sync(remote, { timeoutSecs: 30 })
  assert.equal(pulled.pulled, 1)
  assert.deepEqual(pulled.refused, [])
  const hits = await b.recall('locker', { user: 'ana' })
  assert.equal(hits[0].item.text, "Ana's locker code is 7731")
  await assert.rejects(b.sync('ftp://example.invalid/x'), InvalidInputError)
  await b.close()
  const plain = await Memory.open(join(root, 'plain'), { hashingEmbedder: 64 })
  await assert.rejects(plain.sync(remote), InvalidInputError)
  await plain.close()
})
