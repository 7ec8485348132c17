// Bytes on the wire for the benchmarks: a site served behind a pass-through proxy that counts
// every request of the page and of its workers, compressed as sent, a cold first search in a
// fresh browser context, and Pagefind's first search. Used by bench/compare.mjs and
// bench/scale.mjs.
import http from 'node:http';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from '../tests/browser/harness.mjs';

// Index data: everything but code (Pagefind's entry, meta, index chunks, fragments, filters;
// Lantern's bundle, its split form's meta and shards, and the query table).
export const isData = (p) => /\.(pf_meta|pf_index|pf_fragment|pf_filter|lantern|query|bin)$|pagefind-entry\.json$/.test(p);

/**
 * Serves `site` behind the counting proxy; `take()` returns and clears the requests seen. With
 * `brotli`, requests ask for brotli as Chromium does over https; with `gzip`, for gzip alone
 * (what a host that sends no brotli, such as GitHub Pages, serves), so bytes are counted as a
 * real host sends them.
 */
export async function countedServer(site, { brotli = false, gzip = false } = {}) {
  writeFileSync(join(site, 'blank.html'), '<!doctype html><html><meta charset="utf-8"><title>blank</title></html>');
  const origin = await serve(site);
  let requests = [];
  const counter = http.createServer((req, res) => {
    // Recent Chromium asks for brotli over http too: `gzip` asks for what GitHub Pages sends.
    const encoding = brotli ? 'gzip, deflate, br' : gzip ? 'gzip, deflate' : null;
    const headers = encoding ? { ...req.headers, 'accept-encoding': encoding } : req.headers;
    const up = http.request(new URL(req.url, origin.url), { method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      const entry = { path: new URL(req.url, origin.url).pathname, bytes: 0, at: Date.now() };
      requests.push(entry);
      r.on('data', (d) => { entry.bytes += d.length; });
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise((r) => counter.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${counter.address().port}/`,
    take() { const seen = requests; requests = []; return seen; },
    /** The requests seen so far, kept (a copy: their byte counts as of now). */
    peek() { return requests.map((r) => ({ ...r })); },
    stop() { counter.close(); origin.stop(); },
  };
}

/**
 * Runs `fn(arg)` in a fresh context on a blank page of `server`: ms as `fn` returns it, the
 * files fetched, their bytes (all, and index data), `sum(filter)` for other subsets, and the
 * page and context, still open.
 */
export async function coldRun(chrome, server, fn, arg) {
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  await page.goto(server.url + 'blank.html');
  server.take();
  const ms = await page.evaluate(fn, arg);
  await page.waitForTimeout(300);
  const files = server.take().filter((r) => r.path !== '/blank.html');
  const sum = (f = () => true) => files.filter(f).reduce((n, r) => n + r.bytes, 0);
  return { page, ctx, ms, files, bytes: sum(), data: sum((r) => isData(r.path)), sum };
}

/** Bytes of every file below `dir`. */
export function dirBytes(dir) {
  let n = 0;
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    const s = statSync(p);
    n += s.isDirectory() ? dirBytes(p) : s.size;
  }
  return n;
}

/** Pagefind's first search for `q` through its JS API, its ten results' data included (runs in the page). */
export const pagefindFirst = async (q) => {
  const t0 = performance.now();
  const pf = await import('/pagefind/pagefind.js');
  await pf.init();
  const r = await pf.search(q);
  await Promise.all(r.results.slice(0, 10).map((x) => x.data()));
  return performance.now() - t0;
};
