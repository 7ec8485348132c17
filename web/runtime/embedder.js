// The embedder's client side: the model runs in a Web Worker (embed-worker.js); this holds the
// worker, its replies and the order of its start-up. `start` has the worker compile the
// embedder and fetches the model folder's manifest here; `proceed`, called with the files a
// bundle accepted from that manifest (`acceptModel`), has the worker fetch the model while the
// embedder may still be compiling, and build it. No model byte is fetched before a bundle has
// accepted the manifest's model.
import { fetchBytes } from './fetch.js';

export class Embedder {
  #worker;
  #pending = new Map();
  #nextId = 1;
  #onProgress;
  #manifestUrl;
  #manifest;
  #ready;
  #settleReady;

  /**
   * Starts the worker, which compiles the embedder, and fetches the manifest.json of the
   * model folder at `modelUrl` (it names the files and states the model's contract). Nothing
   * else is fetched until `proceed`.
   */
  static start({ modelUrl, onProgress } = {}) {
    return new Embedder(modelUrl, onProgress);
  }

  constructor(modelUrl, onProgress) {
    this.#onProgress = onProgress;
    this.#ready = new Promise((resolve, reject) => { this.#settleReady = { resolve, reject }; });
    // Callers may never wait on it (a refused model is never built).
    this.#ready.catch(() => {});
    const worker = new Worker(new URL('./embed-worker.js', import.meta.url), { type: 'module' });
    this.#worker = worker;
    worker.onmessage = (event) => this.#receive(event.data);
    worker.onerror = (e) => this.#fail(new Error(e.message || 'embedder worker failed'));
    worker.postMessage({ type: 'compile' });
    const base = new URL(modelUrl, location.href);
    const folder = base.href.endsWith('/') ? base : new URL(base.href + '/');
    this.#manifestUrl = new URL('manifest.json', folder).href;
    this.#manifest = fetchBytes(this.#manifestUrl);
    this.#manifest.catch(() => {});
  }

  #receive(msg) {
    if (msg.type === 'progress') {
      this.#onProgress?.({ stage: msg.file, loaded: msg.loaded, total: msg.total });
    } else if (msg.type === 'ready') {
      this.#settleReady.resolve();
    } else if (msg.type === 'vector') {
      this.#pending.get(msg.id)?.resolve(msg.vector);
      this.#pending.delete(msg.id);
    } else if (msg.type === 'error') {
      if (msg.id === undefined) { this.#fail(new Error(msg.message)); return; }
      this.#pending.get(msg.id)?.reject(new Error(msg.message));
      this.#pending.delete(msg.id);
    }
  }

  #fail(err) {
    this.#settleReady.reject(err);
    this.terminate();
  }

  /** Resolves to the bytes of the model folder's manifest.json, for a bundle to accept. */
  get manifest() { return this.#manifest; }

  /**
   * Fetches the files a bundle accepted from the manifest (`{ packedFile, tokenizerFile }`,
   * relative to it) and builds the model; resolves when queries can be embedded.
   */
  async proceed(files) {
    const manifest = await this.#manifest;
    this.#worker?.postMessage({
      type: 'build',
      manifest,
      base: this.#manifestUrl,
      keepAll: !!navigator.serviceWorker?.controller,
      model: new URL(files.packedFile, this.#manifestUrl).href,
      tokenizer: new URL(files.tokenizerFile, this.#manifestUrl).href,
    });
    return this.#ready;
  }

  /** Embeds a text (after `proceed` has resolved). */
  embed(text) {
    if (!this.#worker) return Promise.reject(new Error('the embedder was stopped'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ type: 'embed', id, text });
    });
  }

  /** Stops the worker; pending and later embeddings fail. */
  terminate() {
    this.#worker?.terminate();
    this.#worker = null;
    for (const p of this.#pending.values()) p.reject(new Error('the embedder was stopped'));
    this.#pending.clear();
  }
}
