// Many recalls in flight while a writer remembers: every Promise resolves, nothing is lost,
// and the event loop stays responsive (a 10 ms timer never fires more than 50 ms late).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Memory, freshDir } from './helpers.mjs'

test('1,000 concurrent recalls while a writer remembers; the loop stays responsive', async (t) => {
  const mem = await Memory.open(freshDir(), { hashingEmbedder: 128 })
  t.after(() => mem.close())
  await mem.rememberBatch(Array.from({ length: 500 }, (_, i) => `seed memory ${i} about topic ${i % 17}`))

  let worstLate = 0
  let ticks = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    worstLate = Math.max(worstLate, now - last - 10)
    last = now
    ticks++
  }, 10)

  const writes = (async () => {
    const ids = []
    for (let i = 0; i < 100; i++) {
      ids.push((await mem.remember(`written during the recalls ${i}`)).id)
    }
    return ids
  })()
  const recalls = Array.from({ length: 1000 }, (_, i) =>
    mem.recall(`topic ${i % 17}`, { k: 5, strategy: i % 2 ? 'lexical' : 'single' }),
  )
  const results = await Promise.all(recalls)
  const written = await writes
  clearInterval(timer)

  assert.equal(results.length, 1000)
  assert.ok(results.every((hits) => hits.length === 5))
  assert.equal(new Set(written).size, 100)
  assert.equal((await mem.stats()).memories, 600, 'every acknowledged write is there')
  console.log(`event loop: ${ticks} ticks, worst lateness ${worstLate.toFixed(1)} ms`)
  assert.ok(ticks > 0)
  assert.ok(worstLate <= 50, `a 10 ms timer fired ${worstLate.toFixed(1)} ms late`)
})
