// A second process on the same store is refused with a LockedError, as the engine refuses it,
// and a child killed with SIGKILL loses nothing it acknowledged.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'

import { Memory, LockedError, freshDir } from './helpers.mjs'

const child = (dir, script) =>
  spawn(process.execPath, ['--input-type=module', '-e', `
    import { Memory } from 'memloop'
    const mem = await Memory.open(${JSON.stringify(dir)}, { hashingEmbedder: 64 })
    ${script}
  `], { stdio: ['ignore', 'pipe', 'pipe'] })

test('a second process is refused while the first holds the store', async (t) => {
  const dir = freshDir()
  {
    const mem = await Memory.open(dir, { hashingEmbedder: 64 })
    await mem.remember('held by the test process')
    const other = child(dir, '')
    let err = ''
    other.stderr.on('data', (d) => (err += d))
    const code = await new Promise((r) => other.on('exit', r))
    assert.notEqual(code, 0)
    assert.match(err, /LockedError: .*store is locked by process/)
    await assert.rejects(Memory.open(dir, { hashingEmbedder: 64 }), LockedError)
    await mem.close()
  }
  // Closed: the next process opens it.
  const after = child(dir, `console.log((await mem.stats()).memories); await mem.close()`)
  let out = ''
  after.stdout.on('data', (d) => (out += d))
  assert.equal(await new Promise((r) => after.on('exit', r)), 0)
  assert.equal(out.trim(), '1')
})

test('kill -9 in the middle of writes loses no acknowledged write', async (t) => {
  const dir = freshDir()
  const writer = child(dir, `
    for (let i = 0; ; i++) {
      await mem.remember('acknowledged write ' + i)
      console.log(i)
    }
  `)
  let acked = -1
  let buffer = ''
  writer.stdout.on('data', (d) => {
    buffer += d
    const lines = buffer.split('\n')
    buffer = lines.pop()
    for (const l of lines) acked = Number(l)
  })
  await new Promise((resolve) => {
    const poll = setInterval(() => {
      if (acked >= 30) {
        clearInterval(poll)
        resolve()
      }
    }, 5)
  })
  writer.kill('SIGKILL')
  await new Promise((r) => writer.on('exit', r))
  const mem = await Memory.open(dir, { hashingEmbedder: 64 })
  t.after(() => mem.close())
  for (let i = 0; i <= acked; i++) {
    const item = await mem.get(i + 1)
    assert.equal(item?.text, `acknowledged write ${i}`, `write ${i} of ${acked} lost`)
  }
})
