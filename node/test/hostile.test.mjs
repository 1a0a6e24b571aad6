// Whatever a caller passes, the Node process lives: 10,000 calls with malformed arguments
// (wrong types, huge and odd strings, deep nesting, throwing getters, proxies, symbols), each
// resolving or rejecting with a MemloopError, never a crash and never a raw TypeError.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Memory, MemloopError, freshDir } from './helpers.mjs'

/** A small deterministic generator (xorshift), so a failure names its seed. */
function rng(seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
}

const BIG = 'x'.repeat(600 * 1024)

function value(r, depth = 0) {
  const pick = Math.floor(r() * 24)
  switch (pick) {
    case 0: return undefined
    case 1: return null
    case 2: return NaN
    case 3: return Infinity
    case 4: return -0
    case 5: return 2 ** 64
    case 6: return Math.floor(r() * 20) - 5
    case 7: return r() * 1e6
    case 8: return ''
    case 9: return 'a\u0000b'
    case 10: return '\ud800 lone surrogate'
    case 11: return BIG
    case 12: return 'created'
    case 13: return 12345678901234567890n
    case 14: return -1n
    case 15: return Symbol('s')
    case 16: return () => 1
    case 17: return new Date(NaN)
    case 18: return new Date(r() * 4e12)
    case 19: {
      let deep = []
      for (let i = 0; i < 300; i++) deep = [deep]
      return deep
    }
    case 20: return new Proxy({}, { get() { throw new Error('trap') }, ownKeys() { throw new Error('trap') } })
    case 21: return Object.defineProperty({}, 'text', { enumerable: true, get() { throw new Error('getter') } })
    case 22: return depth < 3 ? Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1)) : []
    default: {
      if (depth >= 3) return {}
      const keys = ['text', 'kind', 'k', 'strategy', 'asOf', 'validFrom', 'budget', 'mode', 'user', 'tags', 'time', 'speaker', 'request', 'outcome', 'steps', 'format', 'since', 'zzz']
      const o = {}
      for (let i = Math.floor(r() * 5); i > 0; i--) o[keys[Math.floor(r() * keys.length)]] = value(r, depth + 1)
      return o
    }
  }
}

const METHODS = ['remember', 'rememberBatch', 'rememberConversation', 'recall', 'context', 'update', 'feedback', 'recordTask', 'observe', 'get', 'forget', 'eraseScope', 'explainDecay', 'sweep', 'export', 'import']

test('10,000 malformed calls: every one a MemloopError or an answer, the process alive', async () => {
  const dir = freshDir()
  const mem = await Memory.open(dir, { hashingEmbedder: 32 })
  await mem.remember('a memory to find')
  const r = rng(20261125)
  let rejected = 0
  let answered = 0
  const batch = []
  for (let i = 0; i < 10_000; i++) {
    const method = METHODS[Math.floor(r() * METHODS.length)]
    const args = Array.from({ length: Math.floor(r() * 4) }, () => value(r))
    // Keep files out of the way: a path the fuzzer makes lands in the test's directory.
    if (method === 'export' || method === 'import') args[0] = `${dir}-x${i % 7}`
    batch.push(
      mem[method](...args).then(
        () => answered++,
        (e) => {
          if (!(e instanceof MemloopError)) {
            const shown = args.map((a) => { try { return String(a) } catch { return '<unprintable>' } })
            assert.fail(`${method}(${shown.join(', ').slice(0, 200)}): ${e?.stack ?? e}`)
          }
          rejected++
        },
      ),
    )
    if (batch.length >= 200) await Promise.all(batch.splice(0))
  }
  await Promise.all(batch)
  await assert.rejects(Memory.open(42), MemloopError)
  await assert.rejects(Memory.open(dir, { hashingEmbedder: -1 }), MemloopError)
  await mem.close()
  console.log(`10,000 malformed calls: ${rejected} refused, ${answered} answered`)
  assert.equal(rejected + answered, 10_000)
})
