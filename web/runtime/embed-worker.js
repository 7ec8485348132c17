// Web Worker that owns the embedder: loads the model off the main thread and embeds queries.
// Start-up (see embedder.js): 'compile' starts compiling the embedder at once; 'build' brings
// the manifest a bundle accepted and the URLs of the files it names, which are fetched while
// the compile may still run; the Rust side reads the manifest again and checks the files.
import init, { WasmEmbedder } from './pkg/lantern_embed_wasm.js';
import { fetchBytes } from './fetch.js';

let embedder = null;
let compiled = null;
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
    self.postMessage({ type: 'ready' });
  } catch (err) {
    self.postMessage({ type: 'error', message: message(err) });
  }
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === 'compile') {
    compile();
  } else if (msg.type === 'build') {
    await build(msg);
  } else if (msg.type === 'embed') {
    try {
      const vector = embedder.embed(msg.text);
      self.postMessage({ type: 'vector', id: msg.id, vector }, [vector.buffer]);
    } catch (err) {
      self.postMessage({ type: 'error', id: msg.id, message: message(err) });
    }
  }
};
