// Lantern's browser API: keyword search as soon as the bundle is loaded, hybrid once the
// embedder (a separate, larger wasm module in a Web Worker) is ready. All ranking happens in
// lantern-engine compiled to wasm; this file only moves bytes and messages.
import initSearch, { SearchIndex } from './pkg/lantern_search_wasm.js';
import { fetchBytes } from './fetch.js';

/** Posts to the proxy and reads its server-sent events; returns the whole answer text. */
async function streamAnswer(proxy, request, onText) {
  const res = await fetch(new URL('answer', proxy.endsWith('/') ? proxy : proxy + '/'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  if (!res.ok) {
    let message = `answer service: HTTP ${res.status}`;
    try { message = (await res.json()).error.message || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (event.startsWith('event: error')) throw new Error('the answer stream failed');
      const data = event.split('\n').find((l) => l.startsWith('data: '));
      if (!data || event.startsWith('event: done')) continue;
      const delta = JSON.parse(data.slice(6)).delta;
      if (delta) { text += delta; onText(text); }
    }
  }
  return text;
}

export class Lantern {
  #index;
  #info;
  #worker = null;
  #ready = false;
  #loading = null;
  #pending = new Map();
  #nextId = 1;

  constructor(index) {
    this.#index = index;
    this.#info = index.info();
  }

  /** Loads and validates a bundle. Rejects with a clear message on a bad or foreign file. */
  static async load(bundleUrl, { onProgress } = {}) {
    await initSearch({ module_or_path: new URL('./pkg/lantern_search_wasm_bg.wasm', import.meta.url) });
    const bytes = await fetchBytes(bundleUrl, onProgress && ((p) => onProgress({ stage: 'bundle', ...p })));
    return new Lantern(new SearchIndex(bytes));
  }

  /** Model, dimensions and counts of the loaded bundle. */
  get info() { return this.#info; }

  /** True once queries are embedded and searches are hybrid. */
  get semanticReady() { return this.#ready; }

  /**
   * Starts the embedder in a worker. Resolves when it is ready; rejects if it fails or if its
   * model is not the one the bundle was built with.
   */
  loadSemantic({ modelUrl, tokenizerUrl, onProgress } = {}) {
    if (this.#loading) return this.#loading;
    const worker = new Worker(new URL('./embed-worker.js', import.meta.url), { type: 'module' });
    this.#worker = worker;
    this.#loading = new Promise((resolve, reject) => {
      worker.onmessage = (event) => {
        const msg = event.data;
        if (msg.type === 'progress') {
          onProgress?.({ stage: msg.file, loaded: msg.loaded, total: msg.total });
        } else if (msg.type === 'ready') {
          try {
            this.#index.checkModel(msg.sha256);
            this.#ready = true;
            resolve();
          } catch (err) {
            worker.terminate();
            reject(err);
          }
        } else if (msg.type === 'vector') {
          this.#pending.get(msg.id)?.resolve(msg.vector);
          this.#pending.delete(msg.id);
        } else if (msg.type === 'error') {
          if (msg.id === undefined) { reject(new Error(msg.message)); return; }
          this.#pending.get(msg.id)?.reject(new Error(msg.message));
          this.#pending.delete(msg.id);
        }
      };
      worker.onerror = (e) => reject(new Error(e.message || 'embedder worker failed'));
      worker.postMessage({
        type: 'load',
        modelUrl: new URL(modelUrl, location.href).href,
        tokenizerUrl: new URL(tokenizerUrl, location.href).href,
        dim: this.#info.dim,
        maxTokens: 256,
      });
    });
    return this.#loading;
  }

  /** Embeds a text with the loaded model (for tests and tools). */
  embed(text) {
    if (!this.#ready) return Promise.reject(new Error('the embedder is not loaded'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ type: 'embed', id, text });
    });
  }

  /**
   * Searches. Hybrid and semantic modes need the embedder; until it is ready they run as
   * keyword search, and `results.mode` says which mode actually ran.
   */
  async search(query, { mode = 'hybrid', k = 10 } = {}) {
    let vector;
    if (mode !== 'keyword' && this.#ready && query.trim()) vector = await this.embed(query);
    return this.#index.search(query, mode, k, vector);
  }

  /**
   * Asks for a cited answer through the proxy at `proxy`. Streams text to `onDelta(text,
   * attempt)`. Resolves to { status: 'answered', text, cited, passages } or
   * { status: 'abstained', reason, passages?, results? }; the citations are verified here, not
   * trusted, with one corrective retry.
   */
  async ask(question, { proxy, onDelta } = {}) {
    const vector = this.#ready && question.trim() ? await this.embed(question) : undefined;
    const prep = this.#index.answerRequest(question, vector);
    if (prep.abstain) return { status: 'abstained', reason: prep.abstain, results: prep.results };
    let request = prep.request;
    for (let attempt = 0; attempt < 2; attempt++) {
      const text = await streamAnswer(proxy, request, (t) => onDelta?.(t, attempt));
      const v = this.#index.verifyAnswer(text, request.passages.length, attempt === 1);
      if (v.verdict === 'accept') return { status: 'answered', text, cited: v.cited, passages: request.passages };
      if (v.verdict === 'abstain') return { status: 'abstained', reason: v.reason, passages: request.passages };
      request = { ...request, correction: v.correction };
    }
    return { status: 'abstained', reason: 'unverifiable_citations', passages: request.passages };
  }

  /** Keyword search, synchronously. */
  searchKeyword(query, { k = 10 } = {}) {
    return this.#index.search(query, 'keyword', k, undefined);
  }
}
