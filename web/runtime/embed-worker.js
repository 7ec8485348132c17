// Web Worker that owns the embedder: loads the model off the main thread and embeds queries.
// The model folder's manifest.json names the files (content-addressed when published by
// `lantern site`) and states the model's contract; the Rust side reads and checks it.
import init, { WasmManifest, WasmEmbedder } from './pkg/lantern_embed_wasm.js';
import { fetchBytes } from './fetch.js';

let embedder = null;
const message = (err) => String(err && err.message ? err.message : err);

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === 'load') {
    try {
      const [, manifestBytes] = await Promise.all([
        init({ module_or_path: new URL('./pkg/lantern_embed_wasm_bg.wasm', import.meta.url) }),
        fetchBytes(msg.manifestUrl),
      ]);
      const manifest = new WasmManifest(manifestBytes);
      self.postMessage({ type: 'manifest', sha256: manifest.sha256 });
      const progress = (file) => (p) => self.postMessage({ type: 'progress', file, ...p });
      // The packed model (a few bits a weight) when the site publishes one: about half the
      // bytes of the model file, decoded here into the same graph.
      const packed = manifest.packedFile;
      const [model, tokenizer] = await Promise.all([
        fetchBytes(new URL(packed ?? manifest.modelFile, msg.manifestUrl).href, progress('model')),
        fetchBytes(new URL(manifest.tokenizerFile, msg.manifestUrl).href, progress('tokenizer')),
      ]);
      embedder = packed
        ? WasmEmbedder.fromPacked(manifest, model, tokenizer)
        : new WasmEmbedder(manifest, model, tokenizer);
      self.postMessage({ type: 'ready' });
    } catch (err) {
      self.postMessage({ type: 'error', message: message(err) });
    }
  } else if (msg.type === 'embed') {
    try {
      const vector = embedder.embed(msg.text);
      self.postMessage({ type: 'vector', id: msg.id, vector }, [vector.buffer]);
    } catch (err) {
      self.postMessage({ type: 'error', id: msg.id, message: message(err) });
    }
  }
};
