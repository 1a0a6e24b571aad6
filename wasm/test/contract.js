// The cross-door contract (`contract/cases.json`, `contract/answers.json`) through the browser
// door, run in the page by the Chromium tests (test_browser.py): the same requests in the same
// order as the Rust API, the CLI, MCP, C, Python and Node run them, each request's fields
// passed camelCase (an RFC 3339 time as a Date, as Node passes one), ids read from the hits or
// blocks, an error from its code; then the whole answers through `memory.call`, read back as
// snake_case and compared field for field.
import { Memory, MemloopError } from '/pkg/memloop.js'

const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const rename = (v, f) =>
  Array.isArray(v) ? v.map((x) => rename(x, f))
    : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [f(k), rename(x, f)]))
      : v

function asBrowser (request) {
  const out = {}
  for (const [k, v] of Object.entries(request)) {
    const isTime = ['as_of', 'valid_from', 'valid_until'].includes(k)
    out[camel(k)] = isTime && typeof v === 'string' && !/^\d+$/.test(v) && !Number.isNaN(Date.parse(v)) ? new Date(v) : v
  }
  return out
}

let fresh = 0
const freshName = (prefix) => `${prefix}-${Date.now()}-${fresh++}`

async function answer (mem, c) {
  const { query, text, ...rest } = asBrowser(c.request)
  try {
    if (c.op === 'remember') return [(await mem.remember({ text, ...rest })).id]
    if (c.op === 'recall') return (await mem.recall(query, rest)).map((h) => h.id)
    if (c.op === 'open') {
      // A fresh store with the case's options (the test embedder in place of a model).
      await (await Memory.open(freshName('contract-open'), { hashingEmbedder: 256, ...rest })).close()
      return []
    }
    return (await mem.context(query, rest)).blocks.map((b) => b.id)
  } catch (e) {
    if (e instanceof MemloopError) return e.code
    throw e
  }
}

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

/**
 * The table's cases on a store opened with `options` (the default model when empty): the
 * cases that failed, as messages, and how many ran.
 */
export async function cases (table, options = {}) {
  const mem = await Memory.open(freshName('contract'), options)
  const failures = []
  try {
    for (const [i, seed] of table.memories.entries()) {
      const id = (await mem.remember(asBrowser(seed))).id
      if (id !== i + 1) failures.push(`seed ${i}: id ${id}`)
    }
    for (const c of table.cases) {
      const got = await answer(mem, c)
      let fine
      if (typeof got === 'string') fine = got === c.error
      else if (c.ids) fine = JSON.stringify(got) === JSON.stringify(c.ids)
      else if (c.ids_any_order) fine = JSON.stringify([...got].sort()) === JSON.stringify([...c.ids_any_order].sort())
      else fine = got.length === c.count
      if (!fine) failures.push(`${c.name}: got ${JSON.stringify(got)}, want ${JSON.stringify(c)}`)
    }
  } finally {
    await mem.close()
  }
  return { ran: table.cases.length, failures }
}

/** The whole answers: each call's answer against the recorded one; the differences. */
export async function wholeAnswers (table, answers) {
  const { hashing_embedder: hashingEmbedder, clock, start_ms: startMs } = table.store
  const mem = await Memory.open(freshName('answers'), { hashingEmbedder, clock, startMs })
  const got = []
  try {
    for (const seed of table.memories) await mem.call('remember', rename(seed, camel))
    for (const c of [...table.cases, ...table.calls].filter((c) => c.op !== 'open')) {
      try {
        got.push({ name: c.name, answer: rename(await mem.call(c.op, rename(c.request, camel)), snake) })
      } catch (e) {
        if (!(e instanceof MemloopError)) throw e
        got.push({ name: c.name, error: e.code })
      }
    }
  } finally {
    await mem.close()
  }
  if (got.length !== answers.length) return { ran: got.length, problems: [`${got.length} answers, ${answers.length} recorded`] }
  const problems = got
    .map((g, i) => [answers[i].name, firstDifference(g, answers[i])])
    .filter(([, d]) => d !== null)
    .map(([name, d]) => `${name}: differs at ${d}`)
  return { ran: got.length, problems }
}
