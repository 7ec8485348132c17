// The model's cost to a reader, this build's demo site (out/web) against another built demo
// site (an earlier commit's out/web, say), measured in one run so only the ratio matters on a
// noisy machine: bytes on the wire, ms to the first results and to the first hybrid result
// with the model, cold and warm, in alternating rounds (each in a fresh Chromium context),
// after one round not counted.
//
//   node bench/browser_against.mjs OTHER_WEB_DIR [ROUNDS]
//
// NETWORK=MBPS/RTT_MS adds a cold visit over a network emulated by Chromium (DevTools
// throttling, which covers the page's and its workers' requests but not a service worker's,
// so that visit runs without one): localhost hides what overlapping downloads buys.
//
// VISITS=N (default 2) makes N visits per context: cold, warm, then later warm visits, two
// seconds apart, reported as the last one (a compiled-code cache may only pay from there).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { serve, browser, root, stopwatch, shownAfterOpen } from '../tests/browser/harness.mjs';

const other = process.argv[2];
const rounds = Number(process.argv[3] || 3);
if (!other || !existsSync(join(other, 'index.html'))) {
  console.error('usage: node bench/browser_against.mjs OTHER_WEB_DIR [ROUNDS] (a built demo site)');
  process.exit(2);
}
const QUESTION = 'can I look things up without an internet connection'; // fetches the model
const visits = Math.max(2, Number(process.env.VISITS || 2));
const network = (process.env.NETWORK || '').match(/^(\d+(?:\.\d+)?)\/(\d+)$/);
if (process.env.NETWORK && !network) {
  console.error('NETWORK must be MBPS/RTT_MS, e.g. 50/40');
  process.exit(2);
}

/** `lantern serve DIR` behind a proxy counting every byte sent, any worker's requests included. */
async function site(dir) {
  return { ...(await serve(dir, { watched: true })), dir };
}

/** One visit: bytes (after the page load) and ms from opening search to the model's results. */
async function visit(s, context, throttled = false) {
  const page = await context.newPage();
  if (throttled) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false, latency: Number(network[2]),
      downloadThroughput: (Number(network[1]) * 1e6) / 8, uploadThroughput: (Number(network[1]) * 1e6) / 8,
    });
  }
  // Times are the page's own: from the "/" key to each result shown (see `stopwatch`).
  await stopwatch(page);
  await page.goto(s.url + 'index.html');
  await page.waitForLoadState('networkidle');
  const start = s.bytes();
  await page.keyboard.press('/');
  const w = page.locator('lantern-search').first();
  await w.locator('input').fill(QUESTION);
  // The first results shown (keyword, perhaps with quick meaning) come before the model's.
  await w.locator('.mode-used').first().waitFor({ timeout: 120_000 });
  const keyword = await shownAfterOpen(page, /results/);
  await w.locator('.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 120_000 });
  const out = { ms: await shownAfterOpen(page, /hybrid results/), keyword, bytes: s.bytes() - start };
  // What follows the first hybrid result (a model's remaining word rows, fetched in the
  // background for offline use): bytes once nothing has arrived for two seconds.
  for (let last = -1; last !== s.bytes();) {
    last = s.bytes();
    await new Promise((r) => setTimeout(r, 2000));
  }
  out.settled = s.bytes() - start;
  if (!throttled) await page.evaluate(() => navigator.serviceWorker.ready);
  await page.close();
  return out;
}

/** Brotli bytes of the embedder module, the packed model and its word rows a site serves. */
function assets(dir) {
  const find = (d, re) => readdirSync(d).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? find(p, re) : re.test(f) ? [p] : [];
  });
  const size = (re) => find(dir, re).reduce((n, p) => n + statSync(p).size, 0);
  return {
    wasm: size(/embed_wasm_bg(-[0-9a-f]{12})?\.wasm\.br$/),
    model: size(/\.pack\.br$/),
    rows: size(/^rows-[0-9a-f]{12}\.bin\.br$/),
  };
}

const sites = [await site(resolve(other)), await site(join(root, 'out/web'))];
const chrome = await browser();
const runs = sites.map(() => []);
// A first round, not counted, warms the machine (disk cache, Chromium's own start-up). The
// order alternates too: what a context leaves behind as it closes falls on both sites.
for (let r = -1; r < rounds; r++) {
  for (const i of r % 2 ? [1, 0] : [0, 1]) {
    const s = sites[i];
    const context = await chrome.newContext();
    const cold = await visit(s, context);
    const warm = await visit(s, context);
    let later;
    for (let v = 3; v <= visits; v++) {
      await new Promise((r) => setTimeout(r, 2000));
      later = await visit(s, context);
    }
    await context.close();
    let slow;
    if (network) {
      const fresh = await chrome.newContext({ serviceWorkers: 'block' });
      slow = await visit(s, fresh, true);
      await fresh.close();
    }
    if (r >= 0) runs[i].push({ cold, warm, later, slow });
  }
}
await chrome.close();
sites.forEach((s) => s.stop());

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
const rows = [
  ['embedder wasm, brotli (KiB)', (i) => assets(sites[i].dir).wasm / 1024],
  ['packed model, brotli (KiB)', (i) => assets(sites[i].dir).model / 1024],
  ['its word rows, brotli (KiB)', (i) => assets(sites[i].dir).rows / 1024],
  ['cold, KiB to the first hybrid result with the model', (i) => median(runs[i].map((x) => x.cold.bytes)) / 1024],
  ['cold, KiB once settled (what follows in the background included)', (i) => median(runs[i].map((x) => x.cold.settled)) / 1024],
  ['cold, ms to it', (i) => median(runs[i].map((x) => x.cold.ms))],
  ['warm, ms to it', (i) => median(runs[i].map((x) => x.warm.ms))],
  ['cold, ms to the first results', (i) => median(runs[i].map((x) => x.cold.keyword))],
  ['warm, ms to the first results', (i) => median(runs[i].map((x) => x.warm.keyword))],
];
if (visits > 2) {
  rows.push([`warm, visit ${visits}, ms to the first results`, (i) => median(runs[i].map((x) => x.later.keyword))]);
  rows.push([`warm, visit ${visits}, ms to the first hybrid result`, (i) => median(runs[i].map((x) => x.later.ms))]);
}
if (network) rows.push([`cold over ${network[1]} Mbps, ${network[2]} ms RTT, ms to it`, (i) => median(runs[i].map((x) => x.slow.ms))]);
console.log(`${rounds} alternating rounds, medians; other: ${other}, this: out/web`);
console.log('| | other | this | ratio |\n|---|---|---|---|');
for (const [label, f] of rows) {
  const [a, b] = [f(0), f(1)];
  const show = (v) => (label.includes('KiB') ? Number(v).toFixed(1) : String(Math.round(v)));
  console.log(`| ${label} | ${show(a)} | ${show(b)} | ${(b / a).toFixed(2)}x |`);
}
for (const [i, name] of ['other', 'this'].entries()) {
  const each = runs[i].map((x) => [x.cold.ms, x.warm.ms, x.later?.ms, x.slow?.ms].filter((v) => v !== undefined).join(' / '));
  const later = visits > 2 ? ` / visit ${visits} ms` : '';
  console.log(`${name}, each round (cold ms / warm ms${later}${network ? ' / cold ms over the network' : ''}): ${each.join(', ')}`);
}
