// The cross-door contract (`contract/cases.json`) through the Node door on the default model:
// each request's fields passed as an options object with camelCase keys (an RFC 3339 time as a
// Date, Node's way of giving one), ids read from the hits or blocks, an error from its code.
// The Rust API, the CLI, MCP, C and Python run the same table.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

import { Memory, MemloopError, freshDir } from './helpers.mjs'

const table = JSON.parse(readFileSync(process.env.MEMLOOP_CONTRACT, 'utf8'))

const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())

function asNode(request) {
  const out = {}
  for (const [k, v] of Object.entries(request)) {
    const isTime = ['as_of', 'valid_from', 'valid_until'].includes(k)
    out[camel(k)] = isTime && typeof v === 'string' && !/^\d+$/.test(v) && !Number.isNaN(Date.parse(v)) ? new Date(v) : v
  }
  return out
}

async function answer(mem, c) {
  const { query, text, ...rest } = asNode(c.request)
  try {
    if (c.op === 'remember') return [(await mem.remember({ text, ...rest })).id]
    if (c.op === 'recall') return (await mem.recall(query, rest)).map((h) => h.id)
    if (c.op === 'open') {
      // A fresh store with the case's options (the test embedder in place of a model).
      await (await Memory.open(freshDir(), { hashingEmbedder: 256, ...rest })).close()
      return []
    }
    return (await mem.context(query, rest)).blocks.map((b) => b.id)
  } catch (e) {
    if (e instanceof MemloopError) return e.code
    throw e
  }
}

test('Node keeps the contract', async (t) => {
  const mem = await Memory.open(freshDir())
  t.after(() => mem.close())
  for (const [i, seed] of table.memories.entries()) {
    assert.equal((await mem.remember(asNode(seed))).id, i + 1)
  }
  const failures = []
  for (const c of table.cases) {
    const got = await answer(mem, c)
    let fine
    if (typeof got === 'string') fine = got === c.error
    else if (c.ids) fine = JSON.stringify(got) === JSON.stringify(c.ids)
    else if (c.ids_any_order) fine = JSON.stringify([...got].sort()) === JSON.stringify([...c.ids_any_order].sort())
    else fine = got.length === c.count
    if (!fine) failures.push(`${c.name}: got ${JSON.stringify(got)}, want ${JSON.stringify(c)}`)
  }
  assert.ok(table.cases.length >= 20)
  assert.deepEqual(failures, [])
})
