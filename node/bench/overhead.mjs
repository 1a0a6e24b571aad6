// The Node door's lexical recall latency on the store `binding-overhead` seeded: the same
// queries in the same order, each awaited (see benches/src/bin/binding-overhead.rs).
//   node node/bench/overhead.mjs STORE [MEMORIES] [QUERIES]
import { Memory } from 'memloop'

const [store, memories = '5000', queries = '3000'] = process.argv.slice(2)
const NOUNS = ['falcon', 'compiler', 'glacier', 'violin', 'harbor', 'orchid', 'reactor', 'canyon', 'lantern', 'meadow', 'quartz', 'tundra']
const sentence = (i) => `the ${NOUNS[i % 12]} near station ${i} code k${(i * 7919) % 10007}`
const query = (i) => sentence((i * 7) % Number(memories))

const mem = await Memory.open(store, { hashingEmbedder: 384, durability: 'grouped' })
for (let i = 0; i < 200; i++) await mem.recall(query(i), { k: 5, strategy: 'lexical' })
const micros = []
for (let i = 0; i < Number(queries); i++) {
  const t = process.hrtime.bigint()
  await mem.recall(query(i), { k: 5, strategy: 'lexical' })
  micros.push(Number(process.hrtime.bigint() - t) / 1000)
}
const sync = []
for (let i = 0; i < Number(queries); i++) {
  const t = process.hrtime.bigint()
  mem.recallSync(query(i), { k: 5, strategy: 'lexical' })
  sync.push(Number(process.hrtime.bigint() - t) / 1000)
}
await mem.close()
for (const [door, xs] of [['node', micros], ['node-sync', sync]]) {
  xs.sort((a, b) => a - b)
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length
  console.log(JSON.stringify({ door, queries: xs.length, p50_us: xs[xs.length >> 1], mean_us: mean }))
}
