// The embedder's client side: the model runs in a Web Worker (embed-worker.js); this holds the
// worker, its replies and the order of its start-up. Starting is split in two so it can begin
// before the bundle is known without downloading a model the bundle may refuse: `start`
// compiles the embedder and reads the model folder's manifest; `proceed`, called once the
// bundle has accepted the manifest's model, fetches the model and builds it.

export class Embedder {
  #worker;
  #pending = new Map();
  #nextId = 1;
  #onProgress;
  #manifest;
  #ready;
  #settle = {};

  /**
   * Starts the worker on the model folder at `modelUrl` (its manifest.json names the files and
   * states the model's contract). Nothing but the embedder and the manifest is fetched until
   * `proceed()`.
   */
  static start({ modelUrl, onProgress } = {}) {
    return new Embedder(modelUrl, onProgress);
  }

  constructor(modelUrl, onProgress) {
    this.#onProgress = onProgress;
    this.#manifest = new Promise((resolve, reject) => { this.#settle.manifest = { resolve, reject }; });
    this.#ready = new Promise((resolve, reject) => { this.#settle.ready = { resolve, reject }; });
    // Callers may never wait on one of them (a refused model is never built).
    this.#manifest.catch(() => {});
    this.#ready.catch(() => {});
    const worker = new Worker(new URL('./embed-worker.js', import.meta.url), { type: 'module' });
    this.#worker = worker;
    worker.onmessage = (event) => this.#receive(event.data);
    worker.onerror = (e) => this.#fail(new Error(e.message || 'embedder worker failed'));
    const base = new URL(modelUrl, location.href);
    const folder = base.href.endsWith('/') ? base : new URL(base.href + '/');
    worker.postMessage({ type: 'load', manifestUrl: new URL('manifest.json', folder).href });
  }

  #receive(msg) {
    if (msg.type === 'manifest') {
      this.#settle.manifest.resolve(msg.sha256);
    } else if (msg.type === 'progress') {
      this.#onProgress?.({ stage: msg.file, loaded: msg.loaded, total: msg.total });
    } else if (msg.type === 'ready') {
      this.#settle.ready.resolve();
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
    this.#settle.manifest.reject(err);
    this.#settle.ready.reject(err);
    this.terminate();
  }

  /** Resolves to the sha256 of the model the folder's manifest names. */
  get manifestSha256() { return this.#manifest; }

  /** Fetches the model and builds it; resolves when queries can be embedded. */
  proceed() {
    this.#worker?.postMessage({ type: 'fetch' });
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
