// Every call of the API with its types, checked by `tsc --noEmit` against the installed
// package's declarations (generated from the Rust by napi-rs).
import { Memory, InvalidInputError, type Context, type Hit, type Item, type Remembered } from 'memloop'

export async function typedUse(dir: string): Promise<void> {
  await using mem = await Memory.open(dir, { hashingEmbedder: 32, durability: 'grouped', clock: 'manual', start: new Date() })
  const a: Remembered = await mem.remember('text')
  const b: Remembered = await mem.remember({ text: 'fact', kind: 'fact', tags: ['t'], validFrom: '2024-01-01T00:00:00Z', user: 'ana' })
  const batch: Remembered[] = await mem.rememberBatch(['one', { text: 'two', importance: 0.2 }])
  const hits: Hit[] = await mem.recall('text', { k: 3, strategy: 'lexical', asOf: new Date(), kinds: ['fact'], history: true })
  const ctx: Context = await mem.context('text', { budget: 100, mode: 'documents', keyShare: 0.5 })
  const item: Item | null = await mem.get(a.id, { user: 'ana' })
  const v2: number | bigint = await mem.update(b.id, { text: 'fact 2', validFrom: Date.now() })
  const report = await mem.rememberConversation('s', [{ speaker: 'user', text: 'hi', time: new Date() }], { user: 'ana' })
  const task = await mem.recordTask({ request: 'r', outcome: 'success', steps: ['s'] })
  const subject: number | bigint = await mem.observe('file.rs', 'modified', 'content')
  await mem.feedback(subject, 4)
  await mem.explainDecay(subject)
  await mem.sweep({ user: 'ana' })
  const exported = await mem.export(dir + '.mlx', { format: 'mlx', namespace: 'default' })
  const imported = await mem.import(dir + '.mlx')
  await mem.eraseScope({ user: 'ana' })
  await mem.forget(batch[0].id)
  mem.setTime(Date.now() + 1000)
  const stats: Record<string, unknown> = await mem.stats()
  const e: InvalidInputError | null = null
  console.log(hits.length, ctx.tokens, item?.text, v2, report.turns, task.task, exported.exported, imported.added, stats, e)
}
