// An agent with long-term memory in TypeScript: memloop's `remember` and `recall` served as
// MCP tools (the official MCP TypeScript SDK), called by a scripted model, so it runs with no
// API key: swap `scriptedModel` for a real one and the tools stay as they are.
//
//   npx tsc -p examples && node examples/dist/agent-tool.js [store-dir]

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { Memory, MemloopError, fetchModel, type Hit } from 'memloop'
import { z } from 'zod'

/** memloop's remember and recall as the tools of an MCP server. */
function memoryServer(mem: Memory): McpServer {
  const server = new McpServer({ name: 'memloop-example', version: '0.1.0' })
  server.registerTool(
    'remember',
    {
      description: 'Store a fact about the user for later conversations.',
      inputSchema: { text: z.string(), user: z.string() },
    },
    async ({ text, user }) => {
      const done = await mem.remember({ text, user, kind: 'fact' })
      return { content: [{ type: 'text', text: `remembered as memory ${done.id} (${done.action})` }] }
    },
  )
  server.registerTool(
    'recall',
    {
      description: 'Find what is known about the user that is related to a question.',
      inputSchema: { query: z.string(), user: z.string() },
    },
    async ({ query, user }) => {
      const hits: Hit[] = await mem.recall(query, { user, k: 3 })
      return { content: [{ type: 'text', text: hits.map((h) => h.text).join('\n') || 'nothing known' }] }
    },
  )
  return server
}

/** A tool call a model asks for. */
interface ToolCall {
  name: 'remember' | 'recall'
  arguments: { text?: string; query?: string; user: string }
}

/** Stands in for an LLM: remembers statements, recalls for questions, answers from the tool. */
function scriptedModel(message: string, user: string): ToolCall {
  return message.trim().endsWith('?')
    ? { name: 'recall', arguments: { query: message, user } }
    : { name: 'remember', arguments: { text: message, user } }
}

async function main(dir: string): Promise<void> {
  // The default model, downloaded once into the cache the CLI and Python share.
  const model = await fetchModel()
  console.log(`model ${model.dir}${model.downloaded ? ' (downloaded)' : ''}`)
  await using mem = await Memory.open(dir)
  const server = memoryServer(mem)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'scripted-agent', version: '0.1.0' })
  await client.connect(clientSide)

  const conversation: Array<[string, string]> = [
    ['ana', 'I moved to Porto last spring.'],
    ['ana', 'My favourite tea is a smoky lapsang souchong.'],
    ['bob', 'I live in Oslo.'],
    ['ana', 'Which city do I live in?'],
    ['bob', 'Where do I live?'],
  ]
  for (const [user, message] of conversation) {
    const call = scriptedModel(message, user)
    const result = await client.callTool({ name: call.name, arguments: { ...call.arguments } })
    const content = result.content as Array<{ type: string; text: string }>
    console.log(`${user}: ${message}\n  -> ${call.name}: ${content[0].text.split('\n')[0]}`)
  }
  await client.close()
  try {
    await mem.recall('', {})
  } catch (e) {
    if (e instanceof MemloopError) console.log(`an empty query is refused: ${e.code}`)
  }
}

await main(process.argv[2] ?? 'agent-memory')
