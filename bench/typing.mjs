// A reader types: bytes on the wire until the expected page is among the first five results, through each
// system's own search UI (Lantern's widget, Pagefind's UI) on the same pages in the same run,
// a key every 120 ms, from a cold browser context. Counted per response as served, page and
// worker requests alike, the HTML page excepted, twice: asking for gzip alone (what GitHub Pages
// sends) and for brotli as Chromium does over https (Pagefind's files are gzip already).
// Lantern runs twice: with the model (fetched for a question that needs meaning) and as
// `lantern build --model quick` publishes it (model="none": the query table's quick meaning only);
// "index data" is everything but code (bench/wire.mjs). Also the bytes once the page has been
// quiet for 4 s after the result (what the reader's visit costs in the end: offline prefetch,
// meaning).
//
// node bench/typing.mjs SRC_DOCS WORK_DIR [SCALES...]   (bench/typing.sh)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { browser, root, lantern as lanternBin } from '../tests/browser/harness.mjs';
import { countedServer, isData } from './wire.mjs';

const [src, work, ...rest] = process.argv.slice(2);
const scales = rest.length ? rest.map(Number) : [1];
const encodings = (process.env.ENCODINGS ?? 'gzip brotli').split(' ').filter(Boolean);
const KEY_MS = 120;
// Query, and the page whose link counts as the expected result (the first one shown).
const queries = [
  ['ownership', /ch04-01-what-is-ownership\.html/],
  ['how do I read a file', /ch12-02-reading-a-file\.html/],
];

const lanternPage = `<!doctype html><html><head><meta charset="utf-8"><title>Lantern</title>
<script type="module" src="/lantern/widget.js"></script></head>
<body><lantern-search bundle="/search.lantern" model="/model/"></lantern-search></body></html>`;
const quickPage = lanternPage.replace('model="/model/"', 'model="none"');
const pagefindPage = `<!doctype html><html><head><meta charset="utf-8"><title>Pagefind</title>
<link href="/pagefind/pagefind-ui.css" rel="stylesheet"><script src="/pagefind/pagefind-ui.js"></script></head>
<body><div id="search"></div>
<script>window.addEventListener('DOMContentLoaded', () => new PagefindUI({ element: '#search' }));</script></body></html>`;

async function typed(chrome, server, system, query, expected) {
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  await page.goto(`${server.url}${system}.html`);
  await page.waitForLoadState('networkidle');
  if (system !== 'pagefind') {
    await page.keyboard.press('/');
    await page.locator('lantern-search').locator('input').waitFor();
  } else {
    await page.locator('.pagefind-ui__search-input').click();
  }
  const t0 = Date.now();
  await page.keyboard.type(query, { delay: KEY_MS });
  const typedMs = Date.now() - t0;
  // Until the expected page is among the first five results, or 5 s after the last key: the
  // time is read in the frame that shows it, and only requests made before it are counted
  // (what the UI asks for after showing the result did not delay it).
  const shownAt = await page.waitForFunction(([ui, src]) => {
    const links = ui === 'pagefind'
      ? [...document.querySelectorAll('.pagefind-ui__result-link')]
      : [...(document.querySelector('lantern-search')?.shadowRoot?.querySelectorAll('a.hit') ?? [])];
    const pages = [...new Set(links.map((a) => a.getAttribute('href').replace(/#.*$/, '')))].slice(0, 5);
    return pages.some((h) => new RegExp(src).test(h)) && Date.now();
  }, [system === 'pagefind' ? 'pagefind' : 'lantern', expected.source], { polling: 'raf', timeout: 5000 })
    .then((h) => h.jsonValue()).catch(() => null);
  const found = shownAt !== null;
  const ms = (shownAt ?? Date.now()) - t0;
  const atResult = server.peek().filter((r) => !found || r.at <= shownAt);
  await page.waitForTimeout(4000);
  const settled = server.take();
  await ctx.close();
  const bytes = (files, f = () => true) => files.filter((r) => !r.path.endsWith('.html') && f(r)).reduce((n, r) => n + r.bytes, 0);
  return {
    found, ms, typedMs,
    all: bytes(atResult), data: bytes(atResult, (r) => isData(r.path)),
    settledAll: bytes(settled), settledData: bytes(settled, (r) => isData(r.path)),
    requests: atResult.filter((r) => !r.path.endsWith('.html')).length,
  };
}

const kib = (n) => (n / 1024).toFixed(0);
const rows = [];
for (const n of scales) {
  const docs = n === 1 ? src : join(work, `docs-${n}`);
  if (n !== 1 && !existsSync(docs)) execFileSync('python3', [join(root, 'bench/replicate.py'), src, docs, String(n), '--identical']);
  const site = join(work, `typing-${n}`);
  mkdirSync(site, { recursive: true });
  cpSync(join(root, 'out/web/lantern'), join(site, 'lantern'), { recursive: true });
  execFileSync(lanternBin, ['site', docs, '--out', site, '--title', `rust-book-${n}x`, '--cache', join(work, 'cache-copies')], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(join(root, 'bench/node_modules/.bin/pagefind'), ['--site', site, '--quiet'], { stdio: 'inherit' });
  for (const d of ['lantern', 'model', 'search.lantern.d']) {
    execFileSync('node', [join(root, 'web/tools/precompress.mjs'), join(site, d)], { stdio: 'ignore' });
  }
  writeFileSync(join(site, 'lantern.html'), lanternPage);
  writeFileSync(join(site, 'lantern-quick.html'), quickPage);
  writeFileSync(join(site, 'pagefind.html'), pagefindPage);
  for (const encoding of encodings) {
    const server = await countedServer(site, { brotli: encoding === 'brotli', gzip: encoding === 'gzip' });
    const chrome = await browser();
    for (const [q, expected] of queries) {
      const pf = await typed(chrome, server, 'pagefind', q, expected);
      const ln = await typed(chrome, server, 'lantern', q, expected);
      const quick = await typed(chrome, server, 'lantern-quick', q, expected);
      rows.push({ n, encoding, q, pf, ln, quick });
    }
    await chrome.close();
    server.stop();
  }
}

console.log(`\nTyped at ${KEY_MS} ms a key, cold; KiB on the wire until the expected page is among the first five results (index data in brackets); then once quiet for 4 s. "quick": the site built with --model quick.\n`);
console.log('| size | encoding | query | Lantern widget | Lantern, quick | Pagefind UI | ratio all / data (quick all) | Lantern / quick / Pagefind ms | after 4 s quiet: Lantern / quick / Pagefind |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const { n, encoding, q, pf, ln, quick } of rows) {
  const shown = (r) => `${kib(r.all)} (${kib(r.data)})${r.found ? '' : ', not found'}`;
  const settled = (r) => `${kib(r.settledAll)} (${kib(r.settledData)})`;
  console.log(`| ${n}x | ${encoding} | ${q} | ${shown(ln)} | ${shown(quick)} | ${shown(pf)} | ${(ln.all / pf.all).toFixed(2)} / ${(ln.data / Math.max(pf.data, 1)).toFixed(2)} (${(quick.all / pf.all).toFixed(2)}) | ${ln.ms} / ${quick.ms} / ${pf.ms} | ${settled(ln)} / ${settled(quick)} / ${settled(pf)} |`);
}
