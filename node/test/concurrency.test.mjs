// Many recalls in flight while a writer remembers: every Promise resolves, nothing is lost,
// and the event loop stays responsive: a 10 ms timer keeps firing through the recalls (nine in
// ten ticks at most 50 ms late, none held for half the run), where recalls run on the
// JavaScript thread would hold it for the whole run. Not a speed figure: a tick's lateness
// also counts the machine's other load (CI builds beside the suites).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Memory, freshDir } from './helpers.mjs'

test('1,000 concurrent recalls while a writer remembers; the loop stays responsive', async (t) => {
  const mem = await Memory.open(freshDir(), { hashingEmbedder: 128 })
  t.after(() => mem.close())
  await mem.rememberBatch(Array.from({ length: 500 }, (_, i) => `seed memory ${i} about topic ${i % 17}`))

  const lates = []
  const started = performance.now()
  let last = started
  const timer = setInterval(() => {
    const now = performance.now()
    lates.push(now - last - 10)
    last = now
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
  const elapsed = performance.now() - started

  assert.equal(results.length, 1000)
  assert.ok(results.every((hits) => hits.length === 5))
  assert.equal(new Set(written).size, 100)
  assert.equal((await mem.stats()).memories, 600, 'every acknowledged write is there')
  const sorted = [...lates].sort((a, b) => a - b)
  const worst = sorted.at(-1) ?? elapsed
  const p90 = sorted[Math.floor(sorted.length * 0.9)] ?? elapsed
  console.log(
    `event loop: ${lates.length} ticks in ${elapsed.toFixed(0)} ms, ` +
      `lateness p90 ${p90.toFixed(1)} ms, worst ${worst.toFixed(1)} ms`,
  )
  assert.ok(lates.length >= 3, `the timer fired ${lates.length} times in ${elapsed.toFixed(0)} ms`)
  assert.ok(p90 <= 50, `one tick in ten fired over 50 ms late (p90 ${p90.toFixed(1)} ms)`)
  assert.ok(worst < elapsed / 2, `the loop was held ${worst.toFixed(1)} ms of a ${elapsed.toFixed(0)} ms run`)
})
