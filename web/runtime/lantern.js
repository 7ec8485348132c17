// Lantern's browser API: keyword search as soon as the bundle is loaded, hybrid with
// approximate meaning once the bundle's small query table arrives, and hybrid with the model's
// meaning once the embedder (a separate, larger wasm module in a Web Worker) is ready. Ranking and the answer
// protocol happen in lantern-engine compiled to wasm; this file only moves bytes and messages.
import { fetchBytes } from './fetch.js';
import { Embedder } from './embedder.js';

export { Embedder };

/**
 * Tells the service worker, if one controls the page, which shards the split bundle at `base`
 * has now: it keeps shards under their content-addressed names across visits and drops the
 * others there, so a reader's cache does not grow with every deploy.
 */
function forgetOtherShards(base, keep) {
  navigator.serviceWorker?.controller?.postMessage({ lantern: 'shards', base, keep });
}

/** Posts one request to the proxy and feeds the response body to the ask session. */
async function postAnswer(proxy, ask, onText) {
  const res = await fetch(new URL('answer', proxy.endsWith('/') ? proxy : proxy + '/'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ask.request),
  });
  if (!res.ok) {
    let message = `answer service: HTTP ${res.status}`;
    try { message = (await res.json()).error.message || message; } catch { /* not JSON */ }
    throw new Error(message);
  }
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (ask.feed(value)) onText(ask.text);
  }
}

/** A model folder's manifest.json bytes as an object, or a clear error. */
function parseManifest(bytes) {
  let m;
  try {
    m = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new Error(`model manifest: not JSON (${err.message})`);
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new Error('model manifest: not a JSON object');
  return m;
}

/** A wasm-bindgen module, imported and initialised on first use (again after a failure). */
function onFirstUse(load) {
  let loading = null;
  return () => {
    loading ??= load();
    loading.catch(() => { loading = null; });
    return loading;
  };
}
const initialised = async (m, wasm) => { await m.default({ module_or_path: wasm }); return m; };

// The search core on its own, for pages without the widget (whose UI module carries one).
const searchModule = onFirstUse(async () => initialised(await import('./pkg/lantern_search_wasm.js'),
  new URL('./pkg/lantern_search_wasm_bg.wasm', import.meta.url)));

// The answer protocol (reading the proxy's stream, checking citations) is its own small wasm
// module, fetched the first time a reader asks: searching never pays for it.
const answerModule = onFirstUse(async () => initialised(await import('./pkg/lantern_ask_wasm.js'),
  new URL('./pkg/lantern_ask_wasm_bg.wasm', import.meta.url)));

/** Resolves once the page has painted (at once where nothing paints, or in a hidden tab). */
const afterPaint = () => new Promise((resolve) => {
  if (typeof requestAnimationFrame === 'function' && !globalThis.document?.hidden) {
    requestAnimationFrame(() => setTimeout(resolve, 0));
  } else {
    setTimeout(resolve, 0);
  }
});

// The offline prefetch waits for this long without a search.
const PREFETCH_AFTER_MS = 3000;

export class Lantern {
  #index;
  #info;
  #embedder = null;
  #ready = false;
  #loading = null;
  // The embedder while it starts, and the last question searched for meaning: the worker
  // fetches that question's word rows while the model is built.
  #starting = null;
  #asked = null;
  #table = null;
  #tableUrl = null;
  #shardBase = null;
  #shards = new Map();
  #prefetchLimit = 0;
  #prefetching = null;
  #prefetchTimer = null;
  // Searches made with `latest: true`: a newer one supersedes the older ones.
  #generation = 0;

  constructor(index) {
    this.#index = index;
    this.#info = index.info();
  }

  /**
   * Loads and validates a bundle. Rejects with a clear message on a bad or foreign file.
   * A bundle comes whole (`site.lantern`, written by `lantern build --out`) or split
   * (`site.lantern.d/`: a small meta file plus content-addressed shards, the only form a
   * published site carries unless `--whole-file` is given). Given the split
   * form's `site.lantern.d/meta.bin`, searches fetch only the shards they need, and with
   * `prefetch: maxBytes` the rest follows after the first search when it is no larger
   * (see `prefetchAll`); given `site.lantern`, the whole file is fetched. `core` is an
   * initialised module exporting `SearchIndex` (the widget's UI module carries the search
   * core, so a reader downloads it once); by default this loads its own.
   */
  static async load(bundleUrl, { onProgress, prefetch = 0, core } = {}) {
    const { SearchIndex } = core ?? await searchModule();
    const progress = onProgress && ((p) => onProgress({ stage: 'bundle', ...p }));
    const url = new URL(bundleUrl, location.href).href;
    const split = url.endsWith('.d/meta.bin');
    const file = split ? url.slice(0, -'.d/meta.bin'.length) : url;
    const bytes = await fetchBytes(url, progress);
    const base = split ? `${file}.d/` : null;
    const lantern = new Lantern(new SearchIndex(bytes));
    if (base) forgetOtherShards(base, lantern.#index.shardFiles());
    lantern.#shardBase = base;
    lantern.#prefetchLimit = prefetch;
    lantern.#tableUrl = `${file}.query`;
    return lantern;
  }

  /** Fetches and loads shards of a split bundle (each once, in parallel). */
  #fetchShards(names) {
    return Promise.all(names.map((name) => {
      if (!this.#shards.has(name)) {
        const p = fetchBytes(new URL(name, this.#shardBase).href)
          .then((bytes) => this.#index.addShard(name, bytes))
          .catch((err) => { this.#shards.delete(name); throw err; });
        this.#shards.set(name, p);
      }
      return this.#shards.get(name);
    }));
  }

  /**
   * Fetches every shard of a split bundle not loaded yet, when they add up to at most
   * `maxBytes`: later searches then need no network, and the service worker keeps them for
   * offline use. Resolves to the number of shards fetched (0 when over the limit).
   */
  prefetchAll(maxBytes = Infinity) {
    if (!this.#shardBase) return Promise.resolve(0);
    this.#prefetching ??= (async () => {
      const rest = this.#index.unloadedShards();
      if (!rest.length || this.#index.unloadedBytes() > maxBytes) return 0;
      await this.#fetchShards(rest);
      return rest.length;
    })();
    return this.#prefetching;
  }

  /**
   * Runs `run` until the bundle has every shard it names (a whole bundle: once). With `wait`,
   * the first fetch waits that many ms; whenever `current()` turns false (a newer search
   * started), it stops and resolves to null, and what it has not requested is never fetched.
   */
  async #complete(run, { current = () => true, wait = 0 } = {}) {
    for (let round = 0; round < 8; round++) {
      const missing = run();
      const names = Array.isArray(missing) ? missing : missing.missing;
      if (!names?.length || !this.#shardBase) return missing;
      if (round === 0 && wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (!current()) return null;
      await this.#fetchShards(names);
      if (!current()) return null;
    }
    throw new Error('lantern: a search kept asking for more of the bundle');
  }

  /**
   * The offline prefetch (`prefetch` in `load`) starts once searching has paused for a few
   * seconds and the browser is idle: a reader typing pays only for what their words need.
   */
  #schedulePrefetch() {
    if (!this.#prefetchLimit || this.#prefetching) return;
    clearTimeout(this.#prefetchTimer);
    this.#prefetchTimer = setTimeout(() => {
      const go = () => this.prefetchAll(this.#prefetchLimit).catch(() => {});
      if (typeof requestIdleCallback === 'function') requestIdleCallback(go, { timeout: 5000 });
      else go();
    }, PREFETCH_AFTER_MS);
  }

  async #attachTable(url) {
    try {
      this.#index.setQueryTable(await fetchBytes(url));
      return true;
    } catch (err) {
      // A site built without one, or a damaged file: searches stay keyword until the model.
      console.warn(`lantern: no query table (${err.message || err})`);
      return false;
    }
  }

  /**
   * Fetches the bundle's query table (`BUNDLE.query`, a few hundred KB) and resolves true once
   * it is attached: hybrid searches then carry approximate meaning before the model arrives
   * (`results.approximate`). Resolves false when the site has none or it is damaged.
   */
  loadQueryTable() {
    this.#table ??= this.#attachTable(this.#tableUrl);
    return this.#table;
  }

  /** Model, dimensions and counts of the loaded bundle. */
  get info() { return this.#info; }

  /** True once queries are embedded and searches are hybrid. */
  get semanticReady() { return this.#ready; }

  /**
   * Starts the embedder in a worker from the model folder at `modelUrl` (its manifest.json
   * names the files and the model's contract), or adopts `embedder`, one started earlier with
   * `Embedder.start` (e.g. while the bundle loaded). Resolves when it is ready; rejects if it
   * fails or if its model is not the one the bundle was built with (checked before the
   * model is downloaded). `shared: false` starts a worker of this page's own (embedder.js).
   */
  loadSemantic({ modelUrl, onProgress, embedder, shared } = {}) {
    if (this.#loading) return this.#loading;
    const e = embedder ?? Embedder.start({ modelUrl, onProgress, shared });
    this.#starting = e;
    if (this.#asked) e.expect(this.#asked);
    this.#loading = (async () => {
      try {
        const m = parseManifest(await e.manifest);
        const scripts = Array.isArray(m.scripts) ? m.scripts.map(String) : [];
        const packed = typeof m.packed?.file === 'string' ? m.packed.file : undefined;
        await e.proceed({ packedFile: this.#index.acceptModel(String(m.sha256), scripts, packed) });
      } catch (err) {
        e.terminate();
        this.#loading = null;
        throw err;
      } finally {
        this.#starting = null;
      }
      this.#embedder = e;
      this.#ready = true;
    })();
    return this.#loading;
  }

  /** Embeds a text with the loaded model (for tests and tools). */
  embed(text) {
    if (!this.#ready) return Promise.reject(new Error('the embedder is not loaded'));
    return this.#embedder.embed(text);
  }

  /** The site's filters: [{ key, values: [[value, pageCount], ...] }], empty when it has none. */
  get facets() { return this.#index.facets(); }

  /**
   * Searches. Hybrid and semantic modes use the embedder once it is ready; before, the query
   * table's approximate vector (`results.approximate`), or without one keyword search, and
   * `results.mode` says which mode actually ran. `filters` ({ key: value
   * or [values] }) keeps pages carrying one of the values of every key; an unknown key throws.
   *
   * For a search box: with `latest: true` a search resolves to null once a newer `latest`
   * search starts, and fetches nothing more; with `wait: ms` it answers at once from what is
   * loaded, and waits that long before fetching what it lacks (the next keystroke usually
   * supersedes it first).
   *
   * With `first: n` and `onFirst`, a search whose `k` results need shards not loaded yet hands
   * its first `n` to `onFirst` as soon as their texts arrive, then resolves with all `k`: a
   * reader sees the first screen of results without waiting for the rows below it.
   */
  async search(query, { mode = 'hybrid', k = 10, filters, latest = false, wait = 0, first = 0, onFirst } = {}) {
    const generation = latest ? ++this.#generation : 0;
    const current = () => !latest || generation === this.#generation;
    let vector;
    if (mode !== 'keyword' && query.trim()) {
      this.#asked = query;
      if (this.#ready) vector = await this.embed(query);
      else this.#starting?.expect(query);
    }
    if (!current()) return null;
    const run = (n) => () => this.#index.search(query, mode, n, vector, filters);
    let results = null;
    if (first > 0 && first < k && onFirst && this.#shardBase) {
      results = run(k)();
      if (results.missing?.length) {
        const early = await this.#complete(run(first), { current, wait });
        if (!early) return null;
        onFirst(early);
        // The first screen paints before the rest of the list is asked for.
        await afterPaint();
        if (!current()) return null;
        results = null;
        wait = 0;
      }
    }
    results ??= await this.#complete(run(k), { current, wait });
    // After searching pauses, the rest of a small split bundle comes in the background.
    if (results) this.#schedulePrefetch();
    return results;
  }

  /**
   * Asks for a cited answer through the proxy at `proxy`. Streams text to `onDelta(text,
   * attempt)`. Resolves to the engine's outcome: { status: 'answered', text, cited, passages }
   * or { status: 'abstained', reason, passages, modelCalls }. The engine verifies the
   * citations and decides on the one corrective retry; this only carries the bytes.
   */
  async ask(question, { proxy, onDelta } = {}) {
    const vector = this.#ready && question.trim() ? await this.embed(question) : undefined;
    await this.#complete(() => this.#index.askMissing(question, vector));
    const request = this.#index.answerRequest(question, vector);
    const { Ask } = await answerModule();
    const ask = new Ask(request);
    try {
      while (ask.request !== undefined) {
        const attempt = ask.attempt;
        await postAnswer(proxy, ask, (text) => onDelta?.(text, attempt));
        ask.endAttempt();
      }
      return ask.outcome;
    } finally {
      ask.free();
    }
  }

  /**
   * Keyword search, synchronously, over what is loaded: with a split bundle, shards not yet
   * fetched are named in `results.missing` (`search` fetches them).
   */
  searchKeyword(query, { k = 10, filters } = {}) {
    return this.#index.search(query, 'keyword', k, undefined, filters);
  }
}
