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

async function build() {
  if (building || !wanted || !loaded) return;
  building = true;
  try {
    const { manifest, manifestUrl } = loaded;
    const progress = (file) => (p) => self.postMessage({ type: 'progress', file, ...p });
    // The packed model (a few bits a weight) when the site publishes one: about half the
    // bytes of the model file, decoded here into the same graph.
    const packed = manifest.packedFile;
    const [model, tokenizer] = await Promise.all([
      fetchBytes(new URL(packed ?? manifest.modelFile, manifestUrl).href, progress('model')),
      fetchBytes(new URL(manifest.tokenizerFile, manifestUrl).href, progress('tokenizer')),
    ]);
    embedder = packed
      ? WasmEmbedder.fromPacked(manifest, model, tokenizer)
      : new WasmEmbedder(manifest, model, tokenizer);
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
