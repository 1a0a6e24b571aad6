// `memloop mcp --http` through the official MCP TypeScript SDK (StreamableHTTPClientTransport):
// every tool by URL with a bearer token, a token bound to a user kept to that user, and the
// session terminated. The server is the `memloop` binary the Rust build made (MEMLOOP_BIN).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { execFileSync } from 'node:child_process'

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

import { freshDir } from './helpers.mjs'

const BIN = process.env.MEMLOOP_BIN
assert.ok(BIN, 'MEMLOOP_BIN names the memloop binary (scripts/test-node.sh sets it)')

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })

async function startServer(store) {
  const port = await freePort()
  const proc = spawn(BIN, ['--store', store, 'mcp', '--http', `127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  proc.stderr.on('data', (d) => (log += d))
  for (let i = 0; i < 600 && !log.includes('serving http://'); i++) await new Promise((r) => setTimeout(r, 100))
  assert.ok(log.includes('serving http://'), log)
  // The token is printed once, on stderr; the tokens file keeps only its digest.
  const token = log.split('(shown once):\n')[1].split('\n')[0].trim()
  assert.ok(!readFileSync(`${store}/mcp-tokens`, 'utf8').includes(token))
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), token, proc }
}

async function connect(url, token) {
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
  const client = new Client({ name: 'memloop-node-test', version: '0.1.0' })
  await client.connect(transport)
  return { client, transport }
}

const call = async (client, name, args) => {
  const r = await client.callTool({ name, arguments: args })
  return { error: Boolean(r.isError), data: r.structuredContent, text: r.content.map((c) => c.text).join('\n') }
}

test('every tool through the TypeScript SDK over Streamable HTTP; scopes; termination', async (t) => {
  const store = freshDir()
  const server = await startServer(store)
  t.after(() => server.proc.kill('SIGTERM'))

  const { client, transport } = await connect(server.url, server.token)
  const names = (await client.listTools()).tools.map((x) => x.name).sort()
  assert.deepEqual(names, ['context', 'explain_decay', 'feedback', 'forget', 'get', 'list', 'observe', 'recall', 'record_task', 'remember', 'remember_conversation', 'stats', 'sweep', 'update'])
  const a = await call(client, 'remember', { text: 'The staging database listens on port 5433.', kind: 'fact' })
  assert.equal(a.error, false, a.text)
  const bob = await call(client, 'remember', { text: "bob's locker code is 7731", user: 'bob' })
  assert.equal((await call(client, 'recall', { query: 'port 5433', strategy: 'lexical' })).data.hits[0].id, a.data.id)
  assert.ok((await call(client, 'context', { query: 'staging', budget: 50 })).data.tokens <= 50)
  for (const [name, args] of [
    ['update', { id: a.data.id, text: 'The staging database listens on port 5434.' }],
    ['get', { id: a.data.id }],
    ['feedback', { id: a.data.id, level: 4 }],
    ['record_task', { request: 'deploy', steps: ['run'], outcome: 'success' }],
    ['observe', { subject: 'src/main.rs', event: 'created', content: 'fn main() {}' }],
    ['explain_decay', { id: a.data.id }],
    ['remember_conversation', { session: 's1', turns: [{ speaker: 'user', text: 'hi', time: '2026-01-01T10:00:00Z' }] }],
    ['stats', {}],
  ]) {
    const r = await call(client, name, args)
    assert.equal(r.error, false, `${name}: ${r.text}`)
  }
  const bad = await call(client, 'recall', { query: 'x', k: 0 })
  assert.ok(bad.error && bad.text.includes('error code invalid_input'), bad.text)

  // A token bound to alice neither sees nor changes bob's memory.
  const alice = execFileSync(BIN, ['--store', store, 'token', 'add', '--user', 'alice'], { encoding: 'utf8' }).trim()
  const scoped = await connect(server.url, alice)
  const seen = await call(scoped.client, 'recall', { query: 'locker code', strategy: 'lexical' })
  assert.equal(seen.data.hits.length, 0)
  assert.ok((await call(scoped.client, 'get', { id: bob.data.id })).error)
  assert.ok((await call(scoped.client, 'forget', { id: bob.data.id })).error)
  assert.ok((await call(scoped.client, 'stats', {})).error)
  await scoped.client.close()
  assert.equal((await call(client, 'get', { id: bob.data.id })).data.text, "bob's locker code is 7731")

  // Terminated, the session's id is refused.
  const sessionId = transport.sessionId
  assert.ok(sessionId)
  await transport.terminateSession()
  const after = await fetch(server.url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.token}`, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-06-18', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
  })
  assert.equal(after.status, 404)
  await client.close()
})
