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

// The whole answers: every call of the table's whole-answer pass through `memory.call` on a
// store opened with the table's store options; each answer, its keys read back as snake_case,
// is the recorded one (contract/answers.json) field for field.
const answers = JSON.parse(readFileSync(process.env.MEMLOOP_CONTRACT.replace(/cases\.json$/, 'answers.json'), 'utf8'))

const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const fromNode = (v) =>
  Array.isArray(v) ? v.map(fromNode)
    : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), fromNode(x)]))
      : v
const toNode = (v) =>
  Array.isArray(v) ? v.map(toNode)
    : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), toNode(x)]))
      : v

function firstDifference (a, b, path = '') {
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (const [i, x] of a.entries()) {
      const d = firstDifference(x, b[i], `${path}/${i}`)
      if (d !== null) return d
    }
    return null
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if ((k in a) !== (k in b)) return `${path}/${k}`
      const d = firstDifference(a[k], b[k], `${path}/${k}`)
      if (d !== null) return d
    }
    return null
  }
  return a === b ? null : path
}

test('Node gives the registry\'s whole answers', async (t) => {
  const { hashing_embedder: hashingEmbedder, clock, start_ms: startMs } = table.store
  const mem = await Memory.open(freshDir(), { hashingEmbedder, clock, start: new Date(startMs) })
  t.after(() => mem.close())
  for (const [i, seed] of table.memories.entries()) {
    assert.equal((await mem.call('remember', toNode(seed))).id, i + 1)
  }
  const got = []
  for (const c of [...table.cases, ...table.calls].filter((c) => c.op !== 'open')) {
    try {
      got.push({ name: c.name, answer: fromNode(await mem.call(c.op, toNode(c.request))) })
    } catch (e) {
      if (!(e instanceof MemloopError)) throw e
      got.push({ name: c.name, error: e.code })
    }
  }
  assert.equal(got.length, answers.length)
  const problems = got
    .map((g, i) => [answers[i].name, firstDifference(g, answers[i])])
    .filter(([, d]) => d !== null)
    .map(([name, d]) => `${name}: differs at ${d}`)
  assert.deepEqual(problems, [])
})

test('call refuses what the registry refuses', async (t) => {
  const mem = await Memory.open(freshDir(), { hashingEmbedder: 16 })
  t.after(() => mem.close())
  for (const [op, request] of [['teleport', {}], ['recall', { query: 'q', colour: 'red' }], ['list', { limit: 0 }]]) {
    await assert.rejects(mem.call(op, request), (e) => e instanceof MemloopError && e.code === 'invalid_input', op)
  }
})

test('list pages through the memories a filter admits, as every door lists them', async (t) => {
  const mem = await Memory.open(freshDir(), { hashingEmbedder: 16 })
  t.after(() => mem.close())
  for (const [i, seed] of table.memories.entries()) {
    assert.equal((await mem.call('remember', toNode(seed))).id, i + 1)
  }
  const ana = await mem.list({ user: 'ana', limit: 2 })
  assert.deepEqual(ana.map((m) => m.id), [1, 2])
  assert.ok(ana.every((m) => m.user === 'ana' && typeof m.validFrom === 'number'))
  assert.deepEqual((await mem.list({ user: 'ana', offset: 2 })).map((m) => m.id), [5, 8])
  // As of mid-2020: the Lisbon fact's window, and Carol's first address (Berlin began in 2024).
  assert.deepEqual((await mem.list({ kinds: ['fact'], asOf: new Date('2020-06-01').getTime() })).map((m) => m.id), [8, 9])
  await assert.rejects(mem.list({ limit: 0 }), (e) => e instanceof MemloopError && e.code === 'invalid_input')
  await assert.rejects(mem.list({ colour: 'red' }), (e) => e instanceof MemloopError && e.code === 'invalid_input')
})
