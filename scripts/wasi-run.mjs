// Runs a WebAssembly test program built for wasm32-wasip1 in Node's V8, the engine Chromium
// runs memloop's browser build in: cargo's runner for that target (.cargo/config.toml). The
// system's temporary folder is the program's /tmp; the repository and the models' cache are at
// their own paths (the tests read fixtures, the contract table and the default model from
// them); arguments and environment pass through.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { WASI } from "node:wasi";

// The models' cache (scripts/fetch-model.sh fills it) at its own path, where it exists.
function models() {
  const cache = process.env.XDG_CACHE_HOME || join(process.env.HOME || "/", ".cache");
  const dir = join(cache, "memloop");
  return existsSync(dir) ? { [dir]: dir } : {};
}

const [, , program, ...args] = process.argv;
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const wasi = new WASI({
  version: "preview1",
  args: [program, ...args],
  env: process.env,
  preopens: { "/tmp": tmpdir(), [root]: root, ...models() },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
