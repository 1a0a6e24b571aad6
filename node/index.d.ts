/// <reference lib="esnext.disposable" />
// memloop for Node.js: the native addon's declarations (generated from the Rust by napi-rs)
// and the typed errors every call rejects with.

export {
  Memory,
  OpenOptions,
  RememberInput,
  QueryOptions,
  ScopeOptions,
  TurnInput,
  UpdateInput,
  TaskInput,
  ExportOptions,
  Remembered,
  Item,
  Hit,
  Block,
  Context,
  TaskIds,
  ConversationReport,
  Exported,
  ImportReport,
  SyncOptions,
  Synced,
  FetchedModel,
  fetchModel,
} from './native'
export * from './errors'

declare module './native' {
  interface Memory {
    /** Closes the store: `await using mem = await Memory.open(dir)`. */
    [Symbol.asyncDispose](): Promise<void>
  }
}
