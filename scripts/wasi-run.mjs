// Runs a WebAssembly test program built for wasm32-wasip1 in Node's V8, the engine Chromium
// runs memloop's browser build in: cargo's runner for that target (.cargo/config.toml). The
// system's temporary folder is the program's /tmp; its arguments and environment pass through.
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import process from "node:process";
import { WASI } from "node:wasi";

const [, , program, ...args] = process.argv;
const wasi = new WASI({
  version: "preview1",
  args: [program, ...args],
  env: process.env,
  preopens: { "/tmp": tmpdir() },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
