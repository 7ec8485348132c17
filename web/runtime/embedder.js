// The embedder's client side: the model runs in a worker (embed-worker.js); this holds the
// worker, its replies and the order of its start-up. `start` has the worker compile the
// embedder and fetches the model folder's manifest here; `proceed`, called with the files a
// bundle accepted from that manifest (`acceptModel`), has the worker fetch the model while the
// embedder may still be compiling, and build it. No model byte is fetched before a bundle has
// accepted the manifest's model.
//
// The worker is shared where the browser has shared workers: the pages and tabs of a site use
// one model, built once, and asked for an extended lifetime it outlives the page, so the next
// page's first question does not wait for the model to be built again (BENCHMARKS.md). The
// worker's URL is named by its content (web/runtime/build.sh), so pages of another build
// never reach an older worker. Where a shared worker cannot start, a dedicated one does.
import { fetchBytes } from './fetch.js';

const WORKER_URL = new URL('./embed-worker.js', import.meta.url);

export class Embedder {
  #worker;
  // Where messages go: the shared worker's port, or the dedicated worker.
  #port;
  #shared = false;
  #reused = false;
  // What was sent before the worker answered, sent again if the shared worker fails to start.
  #sent = [];
  #answered = false;
  #pending = new Map();
  #nextId = 1;
  #onProgress;
  #manifestUrl;
  #manifest;
  // Questions to embed once the model is built, named before 'build' was sent.
  #expected = [];
  #building = false;
  #ready;
  #settleReady;

  /**
   * Starts the worker, which compiles the embedder, and fetches the manifest.json of the
   * model folder at `modelUrl` (it names the files and states the model's contract). Nothing
   * else is fetched until `proceed`. `shared: false` asks for a worker of this page's own.
   */
  static start({ modelUrl, onProgress, shared = true } = {}) {
    return new Embedder(modelUrl, onProgress, shared);
  }

  constructor(modelUrl, onProgress, shared) {
    this.#onProgress = onProgress;
    this.#ready = new Promise((resolve, reject) => { this.#settleReady = { resolve, reject }; });
    // Callers may never wait on it (a refused model is never built).
    this.#ready.catch(() => {});
    if (!(shared && this.#startShared())) this.#startDedicated();
    this.#post({ type: 'compile' });
    const base = new URL(modelUrl, location.href);
    const folder = base.href.endsWith('/') ? base : new URL(base.href + '/');
    this.#manifestUrl = new URL('manifest.json', folder).href;
    this.#manifest = fetchBytes(this.#manifestUrl);
    this.#manifest.catch(() => {});
  }

  #startShared() {
    if (typeof SharedWorker !== 'function') return false;
    try {
      const worker = new SharedWorker(WORKER_URL, { type: 'module', name: 'lantern-embedder', extendedLifetime: true });
      this.#worker = worker;
      this.#shared = true;
      this.#port = worker.port;
      this.#port.onmessage = (event) => this.#receive(event.data);
      // A shared worker that cannot start (no module shared workers here): a dedicated one
      // is started and told what this one was.
      worker.onerror = () => {
        if (this.#answered || this.#worker !== worker) return;
        this.#port.close();
        this.#startDedicated();
        for (const msg of this.#sent) this.#port.postMessage(msg);
      };
      return true;
    } catch {
      return false;
    }
  }

  #startDedicated() {
    const worker = new Worker(WORKER_URL, { type: 'module' });
    this.#worker = worker;
    this.#shared = false;
    this.#port = worker;
    worker.onmessage = (event) => this.#receive(event.data);
    worker.onerror = (e) => this.#fail(new Error(e.message || 'embedder worker failed'));
  }

  #post(msg) {
    if (!this.#answered) this.#sent.push(msg);
    this.#port?.postMessage(msg);
  }

  #receive(msg) {
    this.#answered = true;
    this.#sent = [];
    if (msg.type === 'progress') {
      this.#onProgress?.({ stage: msg.file, loaded: msg.loaded, total: msg.total });
    } else if (msg.type === 'ready') {
      this.#reused = !!msg.reused;
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

  /** Whether the worker is the one the site's pages share (not this page's own). */
  get shared() { return this.#shared; }

  /** Whether the model was found built (or being built) for another page, once ready. */
  get reused() { return this.#reused; }

  /** Resolves to the bytes of the model folder's manifest.json, for a bundle to accept. */
  get manifest() { return this.#manifest; }

  /**
   * Fetches the packed model a bundle accepted from the manifest (`{ packedFile }`, relative
   * to it; the tokenizer is inside) and builds it; resolves when queries can be embedded.
   */
  async proceed(files) {
    const manifest = await this.#manifest;
    this.#building = true;
    this.#post({
      type: 'build',
      expect: this.#expected.splice(0),
      manifest,
      base: this.#manifestUrl,
      keepAll: !!navigator.serviceWorker?.controller,
      model: new URL(files.packedFile, this.#manifestUrl).href,
    });
    return this.#ready;
  }

  /**
   * Names a text to be embedded once the model is ready (the question waiting for it): the
   * worker fetches the word rows it needs while the model is built, not after.
   */
  expect(text) {
    if (!this.#port || !text.trim()) return;
    if (this.#building) this.#post({ type: 'expect', text });
    else this.#expected = [...this.#expected.slice(-3), text];
  }

  /** Embeds a text (after `proceed` has resolved). */
  embed(text) {
    if (!this.#port) return Promise.reject(new Error('the embedder was stopped'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#post({ type: 'embed', id, text });
    });
  }

  /**
   * Stops this page's use of the worker (a dedicated one is stopped; a shared one goes on for
   * other pages); pending and later embeddings fail.
   */
  terminate() {
    if (this.#shared) {
      this.#port?.postMessage({ type: 'close' });
      this.#port?.close();
    } else {
      this.#worker?.terminate();
    }
    this.#worker = null;
    this.#port = null;
    for (const p of this.#pending.values()) p.reject(new Error('the embedder was stopped'));
    this.#pending.clear();
  }
}
