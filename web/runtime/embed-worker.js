// Web Worker that owns the embedder: loads the model off the main thread and embeds queries.
// The model folder's manifest.json names the files (content-addressed when published by
// `lantern site`) and states the model's contract; the Rust side reads and checks it.
// Start-up has two steps (see embedder.js): 'load' compiles the embedder and reads the
// manifest; 'fetch', sent once the bundle has accepted the manifest's model, downloads the
// model and builds it.
import init, { WasmManifest, WasmEmbedder } from './pkg/lantern_embed_wasm.js';
import { fetchBytes } from './fetch.js';

let embedder = null;
let loaded = null; // { manifest, manifestUrl } once 'load' is done
let wanted = false; // 'fetch' arrived (possibly before 'load' finished)
let building = false;
const message = (err) => String(err && err.message ? err.message : err);

// The browser's SHA-256 (milliseconds; the embedder's own, in wasm, over half a second for the
// packed model); the embedder compares it with the manifest's. None outside secure contexts.
async function sha256(bytes) {
  if (!self.crypto?.subtle) return undefined;
  const sum = new Uint8Array(await self.crypto.subtle.digest('SHA-256', bytes));
  return Array.from(sum, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function build() {
  if (building || !wanted || !loaded) return;
  building = true;
  try {
    const { manifest, manifestUrl } = loaded;
    const progress = (file) => (p) => self.postMessage({ type: 'progress', file, ...p });
    // Browsers run the packed model (a few bits a weight, the graph already prepared): about
    // half the bytes of the model file and a third of the start-up.
    const packed = manifest.packedFile;
    if (!packed) throw new Error('the model folder publishes no packed model for browsers (prepare it with `lantern prepare-model`)');
    const [model, tokenizer] = await Promise.all([
      fetchBytes(new URL(packed, manifestUrl).href, progress('model')),
      fetchBytes(new URL(manifest.tokenizerFile, manifestUrl).href, progress('tokenizer')),
    ]);
    embedder = WasmEmbedder.fromPacked(manifest, model, await sha256(model), tokenizer);
    self.postMessage({ type: 'ready' });
  } catch (err) {
    self.postMessage({ type: 'error', message: message(err) });
  }
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === 'load') {
    try {
      const [, manifestBytes] = await Promise.all([
        init({ module_or_path: new URL('./pkg/lantern_embed_wasm_bg.wasm', import.meta.url) }),
        fetchBytes(msg.manifestUrl),
      ]);
      const manifest = new WasmManifest(manifestBytes);
      loaded = { manifest, manifestUrl: msg.manifestUrl };
      self.postMessage({ type: 'manifest', sha256: manifest.sha256 });
      await build();
    } catch (err) {
      self.postMessage({ type: 'error', message: message(err) });
    }
  } else if (msg.type === 'fetch') {
    wanted = true;
    await build();
  } else if (msg.type === 'embed') {
    try {
      const vector = embedder.embed(msg.text);
      self.postMessage({ type: 'vector', id: msg.id, vector }, [vector.buffer]);
    } catch (err) {
      self.postMessage({ type: 'error', id: msg.id, message: message(err) });
    }
  }
};
