// The worker that owns the embedder: loads the model off the main thread and embeds queries.
// Started as a shared worker where the browser has them (embedder.js), so one model, built
// once, serves every page and tab of the site, and with an extended lifetime it outlives the
// page that started it: the next page's first question skips the model's build. Started as a
// dedicated worker otherwise; the same code serves both, one port per page.
// Start-up (see embedder.js): 'compile' starts compiling the embedder at once; 'build' brings
// the manifest a bundle accepted and the URLs of the files it names, which are fetched while
// the compile may still run; the Rust side reads the manifest again and checks the files.
// 'expect' names a question the page will embed: its word rows are fetched while the model
// builds.
import init, { WasmEmbedder } from './pkg/lantern_embed_wasm.js';
import { fetchBytes } from './fetch.js';

let compiled = null;
// The models built, by what a page asked for (files and manifest): pages of one site share
// one. A few at most (a site with several models is rare); the oldest is dropped first.
const models = new Map();
const MODELS_KEPT = 2;
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

async function load(msg, entry, progress) {
  // Browsers run the packed model (a few bits a weight, the tokenizer inside).
  const [, model] = await Promise.all([compile(), fetchBytes(msg.model, progress('model'))]);
  // Opened first (quick): the word rows of the questions waiting are fetched while the
  // weights are decoded, the slow part that blocks this worker.
  const pending = WasmEmbedder.openPacked(msg.manifest, model, await sha256(model));
  entry.opened = pending;
  for (const text of entry.expected.splice(0)) expect(entry, text);
  // The requests leave before the worker is busy.
  if (entry.rows.size) await new Promise((r) => setTimeout(r, 0));
  entry.opened = null;
  return pending.build();
}

/** Starts fetching the word rows `text` needs that `source` (the model, built or opened) lacks. */
function fetchRows(entry, source, text) {
  for (const s of source.rowsMissing(text)) {
    if (entry.rows.has(s)) continue;
    const file = fetchBytes(new URL(source.rowsFile(s), entry.base).href);
    // A failed fetch is tried again by the next question that needs the rows.
    file.catch(() => { if (entry.rows.get(s) === file) entry.rows.delete(s); });
    entry.rows.set(s, file);
  }
}

/** A question the page will embed: its rows are fetched now (during the build, if any). */
function expect(entry, text) {
  const model = entry.built || entry.opened;
  if (!model) {
    entry.expected.push(text);
    return;
  }
  try {
    fetchRows(entry, model, text);
  } catch {
    // A text the tokenizer refuses: its 'embed' reports the error.
  }
}

/** The model a page asks for: built by the first page to ask, shared with the next. */
function model(msg, progress) {
  const key = JSON.stringify([msg.model, new TextDecoder().decode(msg.manifest)]);
  let entry = models.get(key);
  if (entry) {
    entry.reused = true;
  } else {
    // base: the model's manifest URL, which its word rows' files are named relative to;
    // rows: word-row files being fetched, by shard; expected: questions waiting for the model.
    entry = { base: msg.base, rows: new Map(), expected: [], opened: null, built: null, keepAll: false, kept: null, reused: false };
    entry.embedder = load(msg, entry, progress);
    entry.embedder.then((e) => { entry.built = e; }, () => {});
    // A failed build is not kept: the next page tries again.
    entry.embedder.catch(() => { if (models.get(key) === entry) models.delete(key); });
    models.set(key, entry);
    while (models.size > MODELS_KEPT) models.delete(models.keys().next().value);
  }
  // Whether a service worker keeps what is fetched: then, once a query is answered, every row
  // file is fetched in the background (into its cache) so that any query embeds offline; the
  // same bytes a pack holding its table costs, paid after the first result instead of before.
  entry.keepAll ||= !!msg.keepAll;
  return entry;
}

// The packed model leaves its word-embedding table in small files named by their content; a
// query's missing rows are fetched (cached for ever by the service worker) before embedding.
async function embed(entry, text) {
  const embedder = await entry.embedder;
  const missing = embedder.rowsMissing(text);
  if (missing.length) {
    fetchRows(entry, embedder, text);
    const files = await Promise.all(Array.from(missing, (s) => entry.rows.get(s)));
    // Another question may have added some of them meanwhile.
    const still = new Set(embedder.rowsMissing(text));
    missing.forEach((s, i) => {
      if (still.has(s)) embedder.addRows(s, files[i]);
      entry.rows.delete(s);
    });
  }
  return embedder.embed(text);
}

async function keepEveryRow(entry) {
  const embedder = await entry.embedder;
  // Shards with equal rows share a file: fetched once, given to each.
  const byUrl = new Map();
  for (const s of embedder.rowsAbsent()) {
    const url = new URL(embedder.rowsFile(s), entry.base).href;
    byUrl.set(url, [...(byUrl.get(url) || []), s]);
  }
  const todo = [...byUrl];
  // A few at a time, at low priority: queries' own fetches go first. Each file is kept by the
  // service worker and decoded here, so later questions fetch nothing.
  const next = async () => {
    for (let item = todo.pop(); item; item = todo.pop()) {
      const [url, shards] = item;
      try {
        const bytes = new Uint8Array(await (await fetch(url, { priority: 'low' })).arrayBuffer());
        for (const s of shards) embedder.addRows(s, bytes);
      } catch {
        // Left for the question that needs it to fetch again.
      }
    }
  };
  await Promise.all([next(), next(), next(), next()]);
}

/** One page's conversation: `port` is the page's port (shared) or the worker itself. */
function serve(port) {
  let entry = null;
  port.onmessage = async (event) => {
    const msg = event.data;
    if (msg.type === 'compile') {
      compile();
    } else if (msg.type === 'build') {
      try {
        const progress = (file) => (p) => port.postMessage({ type: 'progress', file, ...p });
        entry = model(msg, progress);
        for (const text of msg.expect || []) expect(entry, text);
        // Whether another page asked for it first (and built it, or is building it).
        const reused = entry.reused;
        await entry.embedder;
        port.postMessage({ type: 'ready', reused });
      } catch (err) {
        entry = null;
        port.postMessage({ type: 'error', message: message(err) });
      }
    } else if (msg.type === 'expect') {
      if (entry) expect(entry, msg.text);
    } else if (msg.type === 'embed') {
      try {
        if (!entry) throw new Error('the embedder is not built');
        const vector = await embed(entry, msg.text);
        port.postMessage({ type: 'vector', id: msg.id, vector }, [vector.buffer]);
        // Two seconds on: the reader's results are drawn first, without rows in flight.
        const e = entry;
        if (e.keepAll && !e.kept) e.kept = new Promise((r) => setTimeout(r, 2000)).then(() => keepEveryRow(e));
      } catch (err) {
        port.postMessage({ type: 'error', id: msg.id, message: message(err) });
      }
    } else if (msg.type === 'close') {
      port.onmessage = null;
      port.close?.();
    }
  };
}

if (typeof SharedWorkerGlobalScope === 'function' && self instanceof SharedWorkerGlobalScope) {
  self.onconnect = (event) => serve(event.ports[0]);
} else {
  serve(self);
}
