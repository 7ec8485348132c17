// What a reader pays, in headless Chromium on localhost against the demo site (out/web):
// bytes over the wire and time until the first keyword result, the first hybrid result with
// the query table's quick meaning, and the first hybrid result with the model's, cold (empty
// cache) and warm (second visit: HTTP cache and service worker), per-query latency of each,
// and the gzipped size of every asset.
import { existsSync, readdirSync, statSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, relative, resolve } from 'node:path';
import { serve, browser, root, stopwatch, shownAfterOpen } from '../tests/browser/harness.mjs';

// WEB=DIR measures another built demo site (default out/web).
const web = process.env.WEB ? resolve(process.env.WEB) : join(root, 'out/web');
// Bytes are counted where they cross the wire: a pass-through proxy in front of `lantern serve`
// sees every request (page, workers, the shared worker, the service worker), compressed as sent.
const server = await serve(web, { watched: true });
const chrome = await browser();
const ctx = await chrome.newContext();
const kb = (b) => `${(b / 1024).toFixed(1)} KiB`;

// The model loads on intent: a paraphrase (no section holds every word) fetches it; a question
// whose words a section holds is answered with the query table's meaning and fetches nothing more.
const PARAPHRASE = 'can I look things up without an internet connection';
const ALL_WORDS = 'how do I keep results between builds';

async function visit(label, query = PARAPHRASE, context = ctx, { ownWorker = false } = {}) {
  const page = await context.newPage();
  // A browser without shared workers, or a visit after the shared one ended: the page's own
  // worker builds the model (from the cache when warm).
  if (ownWorker) await page.addInitScript(() => { Object.defineProperty(window, 'SharedWorker', { value: undefined }); });
  // Times are the page's own: from the "/" key to each result shown (see `stopwatch`).
  await stopwatch(page);
  const start = server.bytes();
  await page.goto(server.url + 'index.html');
  await page.waitForLoadState('networkidle');
  const pageBytes = server.bytes() - start;
  await page.keyboard.press('/');
  const w = page.locator('lantern-search').first();
  await w.locator('input').waitFor();
  await w.locator('input').fill(query);
  await w.locator('.mode-used').filter({ hasText: /keyword|hybrid/ }).first().waitFor({ timeout: 60_000 });
  const kw = { ms: await shownAfterOpen(page, /keyword|hybrid/), bytes: server.bytes() - start - pageBytes };
  await w.locator('.mode-used').filter({ hasText: /quick meaning|hybrid results/ }).first().waitFor({ timeout: 60_000 });
  const quick = { ms: await shownAfterOpen(page, /quick meaning|hybrid results/), bytes: server.bytes() - start - pageBytes };
  if (query === ALL_WORDS) {
    await w.locator('.status[data-stage=ready]').waitFor({ timeout: 60_000 });
    await page.waitForTimeout(2000);
    console.log(`| ${label} | ${kb(pageBytes)} | ${kb(kw.bytes)} | ${kw.ms} | ${kb(quick.bytes)} | ${quick.ms} | no model: ${kb(server.bytes() - start - pageBytes)} in all | - |`);
    return page;
  }
  await w.locator('.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 120_000 });
  const hy = { ms: await shownAfterOpen(page, /hybrid results/), bytes: server.bytes() - start - pageBytes };
  console.log(`| ${label} | ${kb(pageBytes)} | ${kb(kw.bytes)} | ${kw.ms} | ${kb(quick.bytes)} | ${quick.ms} | ${kb(hy.bytes)} | ${hy.ms} |`);
  return page;
}

console.log('| visit | page load | bytes to first keyword result | ms | bytes to first hybrid result, query table | ms | bytes to first hybrid result, model | ms |');
console.log('|---|---|---|---|---|---|---|---|');
const apart = await chrome.newContext(); // cold too, and not warming the context below
await visit(`cold, "${ALL_WORDS}" (every word in a section)`, ALL_WORDS, apart);
await apart.close();
const first = await visit(`cold, "${PARAPHRASE}"`);
await first.evaluate(() => navigator.serviceWorker.ready);
await first.close();
// What the first visit fetches after its answer (the rest of the word rows, for offline use)
// is left to arrive before the next: a reader spends longer than that on a page.
const quietSince = async () => {
  const t0 = Date.now();
  for (let last = server.bytes(), still = Date.now(); Date.now() - t0 < 120_000;) {
    await new Promise((r) => setTimeout(r, 250));
    if (server.bytes() !== last) { last = server.bytes(); still = Date.now(); } else if (Date.now() - still >= 3000) break;
  }
  return Date.now() - t0;
};
console.log(`| (the first visit's downloads ended ${(await quietSince()) / 1000} s after it) | | | | | | | |`);
// The embedder's worker is shared and outlives the page: the second visit finds the model built.
const warm = await visit('warm (second visit; the model built in the shared worker)');
await visit('warm, the model built again (the page\'s own worker, cache warm)', PARAPHRASE, ctx, { ownWorker: true });

// Per-query latency in the page once hybrid is ready (embed in the worker + search + fuse).
const queries = readFileSync(join(root, 'golden/lantern-docs.jsonl'), 'utf8').split('\n').filter(Boolean)
  .map((l) => JSON.parse(l).query);
const lat = await warm.evaluate(async (qs) => {
  const { Lantern } = await import('/lantern/lantern.js');
  const l = await Lantern.load('/search.lantern.d/meta.bin');
  // A worker of this page's own: the model is built from the warm cache, as on a visit after
  // the shared worker has ended (the shared worker, still alive, would answer at once).
  const t0 = performance.now();
  await l.loadSemantic({ modelUrl: '/model/', shared: false });
  const startup = performance.now() - t0;
  const embed = [], held = [], search = [], keyword = [];
  for (let i = 0; i < 110; i++) {
    const q = qs[i % qs.length] + (i >= qs.length ? ` ${i}` : '');
    let t = performance.now();
    await l.embed(q);
    embed.push(performance.now() - t);
    // Again, its word rows held now: the embedding alone.
    t = performance.now();
    await l.embed(q);
    held.push(performance.now() - t);
    t = performance.now();
    l.searchKeyword(q);
    keyword.push(performance.now() - t);
    t = performance.now();
    await l.search(q, { mode: 'hybrid' });
    search.push(performance.now() - t);
  }
  // The query table's approximate hybrid search, on an instance that never loads the model.
  const quick = await Lantern.load('/search.lantern.d/meta.bin');
  await quick.loadQueryTable();
  const table = [];
  for (let i = 0; i < 110; i++) {
    const q = qs[i % qs.length] + (i >= qs.length ? ` ${i}` : '');
    const t = performance.now();
    await quick.search(q, { mode: 'hybrid' });
    table.push(performance.now() - t);
  }
  const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(s.length * p))]; };
  return { startup, n: embed.length, embed: [pct(embed, 0.5), pct(embed, 0.95)], held: [pct(held, 0.5), pct(held, 0.95)], keyword: [pct(keyword, 0.5), pct(keyword, 0.95)], hybrid: [pct(search, 0.5), pct(search, 0.95)], table: [pct(table, 0.5), pct(table, 0.95)] };
}, queries);
console.log(`\nembedder start-up (warm cache): ${lat.startup.toFixed(0)} ms; over ${lat.n} queries, p50 / p95 ms:`);
console.log(`| step | p50 | p95 |\n|---|---|---|`);
console.log(`| embed query (worker; its word rows fetched if new) | ${lat.embed[0].toFixed(1)} | ${lat.embed[1].toFixed(1)} |`);
console.log(`| embed query (worker; the same query again, rows held) | ${lat.held[0].toFixed(1)} | ${lat.held[1].toFixed(1)} |`);
console.log(`| keyword search | ${lat.keyword[0].toFixed(2)} | ${lat.keyword[1].toFixed(2)} |`);
console.log(`| hybrid search incl. embedding | ${lat.hybrid[0].toFixed(1)} | ${lat.hybrid[1].toFixed(1)} |`);
console.log(`| hybrid search with the query table (embedding included) | ${lat.table[0].toFixed(2)} | ${lat.table[1].toFixed(2)} |`);
await chrome.close();
server.stop();

// Asset sizes.
function files(dir) {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}
console.log('\n| asset | bytes | gzipped | precompressed .br |\n|---|---|---|---|');
for (const f of files(web).filter((f) => /(\.wasm|\.js|\.css|\.lantern|\.query|\.onnx|\.pack|tokenizer\.json)$/.test(f) && !f.includes('/pagefind/'))) {
  const b = readFileSync(f);
  const br = existsSync(`${f}.br`) ? statSync(`${f}.br`).size : '-';
  console.log(`| ${relative(web, f)} | ${b.length} | ${gzipSync(b, { level: 9 }).length} | ${br} |`);
}
// The packed model's word rows: hundreds of small files, one line for all of them.
const rowFiles = files(web).filter((f) => /\/rows-[0-9a-f]{12}\.bin$/.test(f));
if (rowFiles.length) {
  const sum = (g) => rowFiles.reduce((n, f) => n + g(f), 0);
  const br = sum((f) => (existsSync(`${f}.br`) ? statSync(`${f}.br`).size : statSync(f).size));
  console.log(`| model/rows-*.bin (${rowFiles.length} files, fetched as queries need them) | ${sum((f) => statSync(f).size)} | ${sum((f) => gzipSync(readFileSync(f), { level: 9 }).length)} | ${br} |`);
}
