// How the first result's cost grows with the site: the Rust book at 1x, 16x and 64x (replicas
// by bench/replicate.py: exact copies, or distinct ones with REPLICAS=distinct, which the model
// must embed anew: hours at 64x), Lantern and Pagefind in the same run. For each size: build
// time and peak memory of both indexers, then in headless Chromium from a cold context, bytes
// on the wire (page and worker requests, through a counting proxy) and ms to the first keyword
// result of both, and to Lantern's first hybrid result with the model's files counted apart.
// Prints a markdown table. Run by bench/scale.sh, which adds vector recall against exact.
//
// node bench/scale.mjs SRC_DOCS WORK_DIR [SCALES...]
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { browser, root, lantern as lanternBin } from '../tests/browser/harness.mjs';
import { countedServer, coldRun as inFreshContext, dirBytes, pagefindFirst } from './wire.mjs';

const [src, work, ...rest] = process.argv.slice(2);
const scales = rest.length ? rest.map(Number) : [1, 16, 64];
const queries = ['ownership', 'how do I read a file'];
const distinct = process.env.REPLICAS === 'distinct';

// Peak resident memory (KiB) and seconds of a command, by GNU time.
function timed(cmd, args) {
  const out = join(work, 'time.txt');
  execFileSync('/usr/bin/time', ['-f', '%e %M', '-o', out, cmd, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const [s, kib] = readFileSync(out, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { s, mib: kib / 1024 };
}

// The model's own files: the model folder, the embedder's wasm and its worker.
const isModel = (p) => p.startsWith('/model/') || /embed/.test(p);

const rows = [];
for (const n of scales) {
  const docs = join(work, `docs-${n}${distinct ? '-distinct' : ''}`);
  if (!existsSync(docs)) execFileSync('python3', [join(root, 'bench/replicate.py'), src, docs, String(n), ...(distinct ? [] : ['--identical'])]);
  const site = join(work, `site-${n}`);
  mkdirSync(site, { recursive: true });
  cpSync(join(root, 'out/web/lantern'), join(site, 'lantern'), { recursive: true });
  // Copies share one cache (their chunks are the same texts); distinct replicas need their own.
  const cache = join(work, distinct ? `cache-${n}-distinct` : 'cache-copies');
  const cold = !existsSync(cache);
  const build = timed(lanternBin, ['site', docs, '--out', site, '--title', `rust-book-${n}x`, '--cache', cache]);
  const pf = timed(join(root, 'bench/node_modules/.bin/pagefind'), ['--site', site, '--quiet']);
  const info = execFileSync(lanternBin, ['inspect', join(site, 'search.lantern')], { encoding: 'utf8' });
  const bundleBytes = dirBytes(join(site, 'search.lantern.d'));
  // Only what the searches fetch (the split form, not the single file): brotli at its best
  // level on thousands of pages and a 130 MB bundle would take long.
  for (const d of ['lantern', 'model', 'search.lantern.d']) {
    execFileSync('node', [join(root, 'web/tools/precompress.mjs'), join(site, d)], { stdio: 'ignore' });
  }
  const chunks = Number(/(\d+) chunks/.exec(info)[1]);
  const pages = Number(/(\d+) pages/.exec(info)[1]);
  const parts = /(\d+) partition/.exec(info)?.[1] ?? '1';
  const metaBytes = statSync(join(site, 'search.lantern.d/meta.bin')).size;

  const server = await countedServer(site);
  const chrome = await browser();
  const coldRun = async (fn, arg) => {
    const r = await inFreshContext(chrome, server, fn, arg);
    await r.ctx.close();
    return { ms: r.ms, all: r.bytes, data: r.data, model: r.sum((f) => isModel(f.path)) };
  };
  const lanternFirst = async ([q, mode]) => {
    const t0 = performance.now();
    const { Lantern } = await import('/lantern/lantern.js');
    const l = await Lantern.load('/search.lantern.d/meta.bin');
    if (mode === 'hybrid') await l.loadSemantic({ modelUrl: '/model/' });
    const r = await l.search(q, { mode });
    if (!r.hits.length) throw new Error(`no hits for ${q}`);
    return performance.now() - t0;
  };
  for (const q of queries) {
    const p = await coldRun(pagefindFirst, q);
    const k = await coldRun(lanternFirst, [q, 'keyword']);
    const h = await coldRun(lanternFirst, [q, 'hybrid']);
    rows.push({ n, pages, chunks, cold, build, pf, bundle: bundleBytes, pfBytes: dirBytes(join(site, 'pagefind')), metaBytes, parts, q, p, k, h });
  }
  await chrome.close();
  server.stop();
}

const kib = (b) => (b / 1024).toFixed(1);
console.log(`Replicas: ${distinct ? 'distinct (bench/replicate.py)' : 'exact copies under other paths'}.`);
console.log('');
console.log('| scale | pages | chunks | Lantern build s / peak MiB | Pagefind build s / peak MiB | Lantern bundle MiB (meta KiB, vector partitions) | Pagefind index MiB |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows.filter((_, i) => i % queries.length === 0)) {
  console.log(`| ${r.n}x | ${r.pages} | ${r.chunks} | ${r.build.s.toFixed(1)} / ${r.build.mib.toFixed(0)}${r.cold ? '' : ' (embeddings cached)'} | ${r.pf.s.toFixed(1)} / ${r.pf.mib.toFixed(0)} | ${(r.bundle / 2 ** 20).toFixed(1)} (${kib(r.metaBytes)}, ${r.parts}) | ${(r.pfBytes / 2 ** 20).toFixed(1)} |`);
}
console.log('');
console.log('Cold first result, bytes on the wire (KiB, all / index data) and ms; hybrid: Lantern with the model, its files counted apart.');
console.log('');
console.log('| scale | query | Pagefind keyword | Lantern keyword | ratio all / data | Lantern hybrid, model excluded | model files |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const f = (x) => `${kib(x.all)} / ${kib(x.data)}, ${x.ms.toFixed(0)} ms`;
  console.log(`| ${r.n}x | ${r.q} | ${f(r.p)} | ${f(r.k)} | ${(r.k.all / r.p.all).toFixed(2)} / ${(r.k.data / r.p.data).toFixed(2)} | ${kib(r.h.all - r.h.model)} / ${kib(r.h.data)}, ${r.h.ms.toFixed(0)} ms | ${kib(r.h.model)} |`);
}
