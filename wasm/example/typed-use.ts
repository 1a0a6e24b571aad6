// The browser package's declarations in use, type-checked by scripts/test-browser.sh
// (`tsc -p wasm/example`): what an app with a bundler writes.
import { Memory, LockedError, type Hit, type Remembered } from '../js/memloop.js'

export async function notes(): Promise<string[]> {
  let mem: Memory
  try {
    mem = await Memory.open('notes', { precision: 'int8', onProgress: ({ done, total }) => console.log(`${done}/${total}`) })
  } catch (e) {
    if (e instanceof LockedError) return ['open in another tab']
    throw e
  }
  const saved: Remembered = await mem.remember({ text: 'The staging database listens on port 5433.', tags: ['ops'] })
  await mem.update(saved.id, { tags: ['ops', 'db'] })
  const hits: Hit[] = await mem.recall('which port does staging use?', { k: 3, strategy: 'rerank' })
  const context = await mem.context('staging', { budget: 120 })
  await mem.feedback(saved.id, 5)
  const { vectors } = await mem.embed(['a text'], { precision: 'f32' })
  await mem.close()
  return [...hits.map((h) => `${h.score.toFixed(3)} ${h.text}`), context.text, String(vectors[0].length)]
}
