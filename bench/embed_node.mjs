// The browser's embedder (the site's wasm module, as built by site/build.sh) run in Node on the
// whole packed model: compile, build (decode the weights) and per-question embedding times.
// No network, no worker: the embedder alone, in the same engine (V8) as Chromium.
//
//   node bench/embed_node.mjs [PKG_DIR (out/web/lantern/pkg)] [MODEL_DIR (models/minilm)]
import { readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = resolve(process.argv[2] ?? join(root, 'out/web/lantern/pkg'));
const modelDir = resolve(process.argv[3] ?? join(root, 'models/minilm'));
const wasm = readdirSync(pkg).find((f) => /^lantern_embed_wasm_bg.*\.wasm$/.test(f));
const mod = await import(pathToFileURL(join(pkg, 'lantern_embed_wasm.js')).href);

let t = performance.now();
await mod.default({ module_or_path: readFileSync(join(pkg, wasm)) });
const compile = performance.now() - t;
const manifest = readFileSync(join(modelDir, 'manifest.json'));
const pack = readFileSync(join(modelDir, 'model.pack'));
const sha = createHash('sha256').update(pack).digest('hex');
t = performance.now();
const embedder = mod.WasmEmbedder.fromPacked(manifest, pack, sha);
const build = performance.now() - t;

const questions = readFileSync(join(root, 'golden/lantern-docs.jsonl'), 'utf8')
  .split('\n').filter(Boolean).map((l) => JSON.parse(l).query);
t = performance.now();
embedder.embed(questions[0]);
const first = performance.now() - t;
const times = [];
for (let round = 0; round < 3; round++) {
  for (const q of questions) {
    t = performance.now();
    embedder.embed(q);
    times.push(performance.now() - t);
  }
}
times.sort((a, b) => a - b);
const pct = (p) => times[Math.floor(p * (times.length - 1))].toFixed(1);
console.log(`compile ${compile.toFixed(0)} ms, build ${build.toFixed(0)} ms, first embedding ${first.toFixed(1)} ms, `
  + `embedding p50 ${pct(0.5)} / p95 ${pct(0.95)} ms over ${times.length}`);
