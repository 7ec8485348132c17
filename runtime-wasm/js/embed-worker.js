// Web Worker that owns the embedder: loads the model off the main thread and embeds queries.
import init, { WasmEmbedder } from './pkg/lantern_embed_wasm.js';
import { fetchBytes } from './fetch.js';

let embedder = null;

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === 'load') {
    try {
      await init({ module_or_path: new URL('./pkg/lantern_embed_wasm_bg.wasm', import.meta.url) });
      const progress = (file) => (p) => self.postMessage({ type: 'progress', file, ...p });
      const [model, tokenizer] = await Promise.all([
        fetchBytes(msg.modelUrl, progress('model')),
        fetchBytes(msg.tokenizerUrl, progress('tokenizer')),
      ]);
      embedder = new WasmEmbedder(model, tokenizer, msg.dim, msg.maxTokens);
      self.postMessage({ type: 'ready', sha256: embedder.sha256 });
    } catch (err) {
      self.postMessage({ type: 'error', message: String(err && err.message ? err.message : err) });
    }
  } else if (msg.type === 'embed') {
    try {
      const vector = embedder.embed(msg.text);
      self.postMessage({ type: 'vector', id: msg.id, vector }, [vector.buffer]);
    } catch (err) {
      self.postMessage({ type: 'error', id: msg.id, message: String(err && err.message ? err.message : err) });
    }
  }
};
