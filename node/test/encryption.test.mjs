// An encrypted store from Node: keyFile / passphrase, a typed StoreKeyError, erasure with its
// signed receipt.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

import { Memory, freshDir } from './helpers.mjs'
import { StoreKeyError } from 'memloop'

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
