// Bytes on the wire for the benchmarks: a site served behind a pass-through proxy that counts
// every request of the page and of its workers, compressed as sent, and a cold first search in
// a fresh browser context. Used by bench/compare.mjs and bench/scale.mjs.
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from '../tests/browser/harness.mjs';

// Index data: everything but code (Pagefind's entry, meta, index chunks, fragments, filters;
// Lantern's bundle, its split form's meta and shards, and the query table).
export const isData = (p) => /\.(pf_meta|pf_index|pf_fragment|pf_filter|lantern|query|bin)$|pagefind-entry\.json$/.test(p);

/** Serves `site` behind the counting proxy; `take()` returns and clears the requests seen. */
export async function countedServer(site) {
  writeFileSync(join(site, 'blank.html'), '<!doctype html><html><meta charset="utf-8"><title>blank</title></html>');
  const origin = await serve(site);
  let requests = [];
  const counter = http.createServer((req, res) => {
    const up = http.request(new URL(req.url, origin.url), { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      const entry = { path: new URL(req.url, origin.url).pathname, bytes: 0 };
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
