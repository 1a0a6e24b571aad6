// The API a TypeScript user calls: every method a Promise, plain camelCase objects in and out,
// times as Date or ISO strings, ids that never round, typed errors, a closed store refused.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Memory, MemloopError, InvalidInputError, NotFoundError, freshDir } from './helpers.mjs'

const open = (options = {}) =>
  Memory.open(freshDir(), { hashingEmbedder: 64, clock: 'manual', start: '2026-01-01T00:00:00Z', ...options })

test('remember, recall, context, get, update, forget round trip', async (t) => {
  const mem = await open()
  t.after(() => mem.close())
  assert.ok(mem instanceof Memory)
  const a = await mem.remember('The staging database listens on port 5433.')
  assert.deepEqual(a, { id: 1, action: 'new' })
  const b = await mem.remember({ text: 'Deploys go out on Tuesday.', kind: 'fact', tags: ['ops'], importance: 0.9 })
  assert.equal(b.id, 2)
  assert.equal((await mem.remember('the staging database listens on port 5433')).action, 'merged')

  const hits = await mem.recall('port 5433', { strategy: 'lexical' })
  assert.equal(hits[0].id, 1)
  assert.equal(hits[0].item.kind, 'chunk')
  assert.equal(typeof hits[0].score, 'number')
  assert.equal(hits[0].item.count, 2)
  assert.ok('validFrom' in hits[0].item && !('valid_from' in hits[0].item), 'camelCase fields')
  assert.equal(hits[0].explain, undefined, 'the parts of a score only when asked')
  const explained = await mem.recall('port 5433', { strategy: 'lexical', explain: true })
  assert.equal(typeof explained[0].explain.lexical, 'number')
  await assert.rejects(mem.context('port', { explain: true }), InvalidInputError)

  const ctx = await mem.context('deploys', { budget: 40, strategy: 'lexical' })
  assert.ok(ctx.tokens <= 40)
  assert.ok(ctx.text.includes('Tuesday'))
  assert.equal(ctx.blocks[0].id, 2)

  const item = await mem.get(2)
  assert.deepEqual(item.tags, ['ops'])
  // A hit's memory is the same plain object `get` answers (hits come as JSON text, `get`'s
  // objects from the addon): the same fields, absent ones absent, the same numbers.
  const [hit] = await mem.recall('deploys', { strategy: 'lexical', k: 1 })
  const again = await mem.get(2)
  assert.deepEqual({ ...hit.item, accessed: 0 }, { ...again, accessed: 0 })
  assert.ok(!('supersededBy' in hit.item) && !('concise' in hit.item), 'absent fields are absent')
  assert.equal(await mem.get(99), null)

  // The merge took no id: the new version is memory 3.
  const v2 = await mem.update(2, { text: 'Deploys go out on Wednesday.' })
  assert.equal(v2, 3)
  assert.equal((await mem.get(2)).supersededBy, 3)
  assert.deepEqual((await mem.recall('deploys', { strategy: 'lexical' })).map((h) => h.id), [3])
  const history = await mem.recall('deploys', { strategy: 'lexical', history: true })
  assert.deepEqual(history.map((h) => h.id).sort(), [2, 3])

  await mem.forget(1)
  assert.equal(await mem.get(1), null)
  await assert.rejects(mem.forget(1), NotFoundError)
})

test('times as Date, ISO strings and milliseconds; validity and as-of', async (t) => {
  const mem = await open()
  t.after(() => mem.close())
  await mem.remember({ text: 'The team worked from Lisbon.', kind: 'fact', validFrom: new Date('2020-01-01T00:00:00Z'), validUntil: '2021-01-01T00:00:00Z' })
  const then = await mem.recall('Lisbon', { strategy: 'lexical', asOf: new Date('2020-06-01T00:00:00Z') })
  assert.equal(then.length, 1)
  assert.equal(then[0].item.validFrom, Date.parse('2020-01-01T00:00:00Z'))
  assert.equal((await mem.recall('Lisbon', { strategy: 'lexical', asOf: '2022-01-01T00:00:00Z' })).length, 0, 'no longer valid then')
  assert.equal((await mem.recall('Lisbon', { strategy: 'lexical', asOf: Date.parse('2020-06-01') })).length, 1)
  await assert.rejects(mem.recall('Lisbon', { asOf: 'last tuesday' }), (e) => e instanceof InvalidInputError && /as_of/.test(e.message))
})

test('conversations, tasks, observations, feedback, decay, stats, sweep, erase', async (t) => {
  const mem = await open()
  t.after(() => mem.close())
  const report = await mem.rememberConversation('s1', [
    { speaker: 'user', text: 'I moved to Porto last spring.', time: '2026-01-01T10:00:00Z' },
    { speaker: 'assistant', text: 'Noted: Porto.', time: new Date('2026-01-01T10:01:00Z') },
  ], { user: 'ana' })
  assert.equal(report.session, 's1')
  assert.equal(report.turns.length, 2)
  assert.equal(typeof report.summary, 'number')

  const task = await mem.recordTask({ request: 'rotate the keys', steps: ['list', 'rotate'], outcome: 'failure', reflection: 'check the vault first' })
  assert.equal(typeof task.task, 'number')
  assert.equal(typeof task.reflection, 'number')
  await assert.rejects(mem.recordTask({ request: 'x', outcome: 'maybe' }), InvalidInputError)

  const subject = await mem.observe('src/main.rs', 'created', 'fn main() {}')
  assert.equal(await mem.observe('src/main.rs', 'modified', 'fn main() { run() }'), subject)
  await assert.rejects(mem.observe('src/main.rs', 'exploded'), /unknown event "exploded", not one of created, modified, executed, deleted/)

  const fb = await mem.feedback(subject, 5)
  assert.equal(fb.count, 1)
  await assert.rejects(mem.feedback(subject, 9), InvalidInputError)
  const decay = await mem.explainDecay(subject)
  assert.equal(decay.id, subject)
  assert.equal(typeof decay.value, 'number')
  assert.equal(typeof decay.strengthS, 'number')

  const stats = await mem.stats()
  assert.ok(stats.memories >= 5)
  assert.equal(stats.model, 'hashing-v1:64')
  const sweep = await mem.sweep()
  assert.equal(typeof sweep.demoted, 'number')

  const erased = await mem.eraseScope({ user: 'ana' })
  assert.ok(erased.memories >= 2)
  assert.equal((await mem.recall('Porto', { strategy: 'lexical', user: 'ana' })).length, 0)
})

test('export and import through the same request the other doors use', async (t) => {
  const dir = freshDir('a')
  const file = dir + '.mlx'
  {
    const a = await Memory.open(dir, { hashingEmbedder: 64 })
    t.after(() => a.close())
    await a.rememberBatch(['one', 'two', { text: 'three', kind: 'fact' }])
    const done = await a.export(file)
    assert.equal(done.exported, 3)
    await assert.rejects(a.export(file + '2', { since: 3 }), /since needs format arrow or parquet/)
    await assert.rejects(a.export(file + '3', { format: 'csv' }), /format "csv" is not one of mlx, arrow, parquet/)
  }
  const b = await Memory.open(freshDir('b'), { hashingEmbedder: 64 })
  t.after(() => b.close())
  const report = await b.import(file)
  assert.deepEqual({ records: report.records, added: report.added }, { records: 3, added: 3 })
})

test('ids above 2^53 are refused exactly or taken as bigint, never rounded', async (t) => {
  const mem = await open()
  t.after(() => mem.close())
  await assert.rejects(mem.get(2 ** 53), (e) => e instanceof InvalidInputError && /bigint/.test(e.message))
  await assert.rejects(mem.get(1.5), InvalidInputError)
  await assert.rejects(mem.get(-1), InvalidInputError)
  assert.equal(await mem.get(2n ** 60n), null)
  await assert.rejects(mem.get(-5n), InvalidInputError)
  await assert.rejects(mem.get(2n ** 64n), InvalidInputError)
})

test('errors are typed MemloopErrors with the engine code', async (t) => {
  const mem = await open()
  t.after(() => mem.close())
  const cases = [
    [() => mem.remember(''), 'invalid_input'],
    [() => mem.remember({ text: 'x', kind: 'poem' }), 'invalid_input'],
    [() => mem.recall('q', { k: 20000 }), 'invalid_input'],
    [() => mem.recall('q', { strategy: 'magic' }), 'invalid_input'],
    [() => mem.context('q', { mode: 'novel' }), 'invalid_input'],
    [() => mem.update(77, { text: 'x' }), 'not_found'],
    [() => mem.recall(42), 'invalid_input'],
    [() => mem.recall('q', { budget: 10 }), 'invalid_input'],
    [() => mem.remember({ nope: 1 }), 'invalid_input'],
  ]
  for (const [call, code] of cases) {
    await assert.rejects(call(), (e) => e instanceof MemloopError && e.code === code, String(call))
  }
  await assert.rejects(Memory.open(freshDir(), { clock: 'lunar' }), (e) => e instanceof InvalidInputError && /lunar/.test(e.message))
  await assert.rejects(Memory.open(freshDir(), { durability: 'sometimes' }), InvalidInputError)
})

test('a closed store refuses every call; close is idempotent and waits for calls in flight', async (t) => {
  const mem = await open()
  await mem.rememberBatch(Array.from({ length: 50 }, (_, i) => `memory number ${i}`))
  const inFlight = Array.from({ length: 20 }, () => mem.recall('memory number 7', { strategy: 'lexical' }))
  const closing = mem.close()
  const settled = await Promise.allSettled(inFlight)
  await closing
  assert.ok(settled.every((s) => s.status === 'fulfilled'), 'calls started before close finish')
  assert.equal(mem.closed, true)
  await assert.rejects(mem.recall('x'), (e) => e instanceof InvalidInputError && /closed/.test(e.message))
  await mem.close()
  // The store was saved: it opens again with everything in it.
  const again = await Memory.open(mem.path, { hashingEmbedder: 64 })
  t.after(() => again.close())
  assert.equal((await again.stats()).memories, 50)
})

test('recallSync: the lexical strategy on the JavaScript thread, the others refused', async (t) => {
  const mem = await open()
  t.after(() => mem.close())
  await mem.rememberBatch(['the harbour crane lifts containers', 'the orchard grows pears'])
  const hits = mem.recallSync('harbour crane', { strategy: 'lexical', k: 1 })
  assert.equal(hits[0].text, 'the harbour crane lifts containers')
  assert.throws(() => mem.recallSync('harbour'), (e) => e instanceof InvalidInputError && /lexical/.test(e.message))
  assert.throws(() => mem.recallSync(42), InvalidInputError)
})
