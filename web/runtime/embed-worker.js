// Web Worker that owns the embedder: loads the model off the main thread and embeds queries.
// Start-up (see embedder.js): 'compile' starts compiling the embedder at once; 'build' brings
// the manifest a bundle accepted and the URLs of the files it names, which are fetched while
// the compile may still run; the Rust side reads the manifest again and checks the files.
import init, { WasmEmbedder } from './pkg/lantern_embed_wasm.js';
import { fetchBytes } from './fetch.js';

let embedder = null;
let compiled = null;
// The model's manifest URL: the word rows' files are named relative to it.
let base = null;
// Whether a service worker keeps what is fetched: then, once the first query is answered, every
// row file is fetched in the background (into its cache) so that any query embeds offline; the
// same bytes a pack holding its table costs, paid after the first result instead of before.
let keepAll = false;
let kept = null;
const message = (err) => String(err && err.message ? err.message : err);

function compile() {
  if (!compiled) {
    compiled = init({ module_or_path: new URL('./pkg/lantern_embed_wasm_bg.wasm', import.meta.url) });
    // A failure is reported by 'build', which awaits it.
    compiled.catch(() => {});
  }
  return compiled;
}

// The browser's SHA-256 (milliseconds; the embedder's own, in wasm, over half a second for the
// packed model); the embedder compares it with the manifest's. None outside secure contexts.
async function sha256(bytes) {
  if (!self.crypto?.subtle) return undefined;
  const sum = new Uint8Array(await self.crypto.subtle.digest('SHA-256', bytes));
  return Array.from(sum, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function build(msg) {
  const progress = (file) => (p) => self.postMessage({ type: 'progress', file, ...p });
  try {
    // Browsers run the packed model (a few bits a weight, the graph already prepared).
    const [, model, tokenizer] = await Promise.all([
      compile(),
      fetchBytes(msg.model, progress('model')),
      fetchBytes(msg.tokenizer, progress('tokenizer')),
    ]);
    embedder = WasmEmbedder.fromPacked(msg.manifest, model, await sha256(model), tokenizer);
    base = msg.base;
    keepAll = !!msg.keepAll;
    self.postMessage({ type: 'ready' });
  } catch (err) {
    self.postMessage({ type: 'error', message: message(err) });
  }
}

// The packed model leaves its word-embedding table in small files named by their content; a
// query's missing rows are fetched (cached for ever by the service worker) before embedding.
async function embed(text) {
  const missing = embedder.rowsMissing(text);
  if (missing.length) {
    const files = await Promise.all(
      Array.from(missing, (s) => fetchBytes(new URL(embedder.rowsFile(s), base).href)),
    );
    missing.forEach((s, i) => embedder.addRows(s, files[i]));
  }
  return embedder.embed(text);
}

async function keepEveryRow() {
  // Shards with equal rows share a file: fetched once, given to each.
  const byUrl = new Map();
  for (const s of embedder.rowsAbsent()) {
    const url = new URL(embedder.rowsFile(s), base).href;
    byUrl.set(url, [...(byUrl.get(url) || []), s]);
  }
  const todo = [...byUrl];
  // A few at a time, at low priority: queries' own fetches go first. Each file is kept by the
  // service worker and decoded here, so later questions fetch nothing.
  const next = async () => {
    for (let item = todo.pop(); item; item = todo.pop()) {
      const [url, shards] = item;
      try {
        const bytes = new Uint8Array(await (await fetch(url, { priority: 'low' })).arrayBuffer());
        for (const s of shards) embedder.addRows(s, bytes);
      } catch {
        // Left for the question that needs it to fetch again.
      }
    }
  };
  await Promise.all([next(), next(), next(), next()]);
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === 'compile') {
    compile();
  } else if (msg.type === 'build') {
    await build(msg);
  } else if (msg.type === 'embed') {
    try {
      const vector = await embed(msg.text);
      self.postMessage({ type: 'vector', id: msg.id, vector }, [vector.buffer]);
      // Two seconds on: the reader's results are drawn first, without rows in flight.
      if (keepAll && !kept) kept = new Promise((r) => setTimeout(r, 2000)).then(keepEveryRow);
    } catch (err) {
      self.postMessage({ type: 'error', id: msg.id, message: message(err) });
    }
  }
};
