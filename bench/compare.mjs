// Lantern and Pagefind side by side on the same corpus and questions: page-level hit@1/3/5,
// MRR@10 and nDCG@10 by question type, index bytes, and the bytes and time of a first search
// in headless Chromium. One command reproduces it (bench/compare.sh).
//
// node bench/compare.mjs NAME DOCS_DIR GOLDEN.jsonl
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browser, cli, root } from '../tests/browser/harness.mjs';
import { countedServer, coldRun, dirBytes, pagefindFirst } from './wire.mjs';

const [name, docs, golden] = process.argv.slice(2);
const questions = readFileSync(golden, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('//')).map((l) => JSON.parse(l));
const group = (q) => q.type || q.family || 'all';
const expected = (q) => (Array.isArray(q.expected) ? q.expected : q.expected ? [q.expected] : []);
const answerable = (q) => expected(q).length > 0 && q.type !== 'unanswerable';
const matches = (source, e) => e === source || e.endsWith('/' + source);

// 1. The same corpus as a site: Lantern's pages (with the runtime) and its bundle.
const site = mkdtempSync(join(tmpdir(), `lantern-cmp-${name}-`));
cpSync(join(root, 'out/web/lantern'), join(site, 'lantern'), { recursive: true });
cpSync(join(root, 'out/web/model'), join(site, 'model'), { recursive: true });
cli('site', docs, '--out', site, '--title', name, '--cache', join(root, `out/${name}.compare.cache`));
// 2. Pagefind's index of the same pages.
execFileSync(join(root, 'bench/node_modules/.bin/pagefind'), ['--site', site, '--quiet'], { stdio: 'inherit' });
const pagefindBytes = dirBytes(join(site, 'pagefind'));
const lanternBytes = dirBytes(join(site, 'search.lantern.d'));
// Deployed as the demo is: brotli and gzip copies beside Lantern's files (Pagefind's index
// files are gzip already).
execFileSync('node', [join(root, 'web/tools/precompress.mjs'), site], { stdio: 'ignore' });

// 3. Lantern's three modes natively (the browser ranks identically; see the runtime tests).
const lanternJson = join(site, 'eval.json');
cli('eval', '--bundle', join(site, 'search.lantern'), '--golden', golden, '--json', lanternJson);
const lanternOutcomes = JSON.parse(readFileSync(lanternJson, 'utf8')).outcomes;

// 4. In Chromium: the first search of each system from a cold context on an empty page
// (bytes over the wire and time), then Pagefind's answers to every question.
// Bytes are counted where they cross the wire (bench/wire.mjs): Pagefind searches in a worker.
const server = await countedServer(site);
const chrome = await browser();
const cold = (fn, arg) => coldRun(chrome, server, fn, arg);
const lanternFirst = async (q) => {
  const t0 = performance.now();
  const { Lantern } = await import('/lantern/lantern.js');
  // The split bundle: the meta file, then the shards the query names.
  const l = await Lantern.load('/search.lantern.d/meta.bin');
  await l.search(q, { mode: 'keyword' });
  return performance.now() - t0;
};
const second = 'how do I read a file';
const pfCold2 = await cold(pagefindFirst, second);
await pfCold2.ctx.close();
const lnCold2 = await cold(lanternFirst, second);
await lnCold2.ctx.close();
const pfCold = await cold(pagefindFirst, 'ownership');
const pfRuns = await pfCold.page.evaluate(async (qs) => {
  const pf = await import('/pagefind/pagefind.js');
  const out = [];
  for (const q of qs) {
    const t0 = performance.now();
    const r = await pf.search(q);
    const data = await Promise.all(r.results.slice(0, 10).map((x) => x.data()));
    out.push({ urls: data.map((d) => d.url), ms: performance.now() - t0 });
  }
  return out;
}, questions.map((q) => q.query));
await pfCold.ctx.close();
const lnCold = await cold(lanternFirst, 'ownership');
await lnCold.ctx.close();
await chrome.close();
server.stop();

// 5. Metrics.
const toSource = (url) => url.replace(/^\//, '').replace(/#.*$/, '').replace(/index\.html$/, 'index.html').replace(/\.html$/, '.md');
function metrics(ranks) {
  const n = ranks.length || 1;
  const at = (k) => ranks.filter((r) => r && r <= k).length / n;
  return {
    n: ranks.length, hit1: at(1), hit3: at(3), hit5: at(5),
    mrr10: ranks.reduce((s, r) => s + (r && r <= 10 ? 1 / r : 0), 0) / n,
    ndcg10: ranks.reduce((s, r) => s + (r && r <= 10 ? 1 / Math.log2(r + 1) : 0), 0) / n,
  };
}
const pfRank = (q, i) => {
  const srcs = pfRuns[i].urls.map(toSource);
  const seen = [];
  for (const s of srcs) if (!seen.includes(s)) seen.push(s);
  const r = seen.findIndex((s) => expected(q).some((e) => matches(s, e) || matches(s.replace(/index\.md$/, 'README.md'), e)));
  return r < 0 ? null : r + 1;
};
const systems = {
  pagefind: questions.map((q, i) => ({ q, rank: pfRank(q, i) })),
};
for (const mode of ['keyword', 'vector', 'hybrid']) {
  systems[`lantern ${mode}`] = questions.map((q, i) => ({ q, rank: lanternOutcomes[mode][i].page_rank }));
}
const groups = ['all', ...new Set(questions.map(group))].filter((g, i, a) => a.indexOf(g) === i);
const f = (x) => x.toFixed(3);
console.log(`\n### ${name}: ${questions.filter(answerable).length} answerable questions\n`);
console.log('| system | questions | n | hit@1 | hit@3 | hit@5 | MRR@10 | nDCG@10 |');
console.log('|---|---|---|---|---|---|---|---|');
for (const [sys, rows] of Object.entries(systems)) {
  for (const g of groups) {
    const set = rows.filter((r) => answerable(r.q) && (g === 'all' || group(r.q) === g));
    if (!set.length || (g !== 'all' && groups.length === 2)) continue;
    const m = metrics(set.map((r) => r.rank));
    console.log(`| ${sys} | ${g} | ${m.n} | ${f(m.hit1)} | ${f(m.hit3)} | ${f(m.hit5)} | ${f(m.mrr10)} | ${f(m.ndcg10)} |`);
  }
}
const pfMs = pfRuns.map((r) => r.ms).sort((a, b) => a - b);
const kb = (b) => `${(b / 1024).toFixed(1)} KiB`;
console.log(`\n| | Pagefind | Lantern | Lantern/Pagefind |`);
console.log('|---|---|---|---|');
console.log(`| index bytes on disk | ${kb(pagefindBytes)} | ${kb(lanternBytes)} (bundle) | ${(lanternBytes / pagefindBytes).toFixed(2)} |`);
for (const [q, p, l] of [['ownership', pfCold, lnCold], [second, pfCold2, lnCold2]]) {
  console.log(`| "${q}": files fetched for a first (keyword) search, cold | ${p.files.length} | ${l.files.length} | |`);
  console.log(`| "${q}": bytes on the wire, all (worker requests included) | ${kb(p.bytes)} | ${kb(l.bytes)} | ${(l.bytes / p.bytes).toFixed(2)} |`);
  console.log(`| "${q}": of which index data | ${kb(p.data)} | ${kb(l.data)} | ${(l.data / p.data).toFixed(2)} |`);
  console.log(`| "${q}": time to first result, cold, ms | ${p.ms.toFixed(0)} | ${l.ms.toFixed(0)} | ${(l.ms / p.ms).toFixed(2)} |`);
}
console.log(`| Pagefind query p50 / p95 ms | ${pfMs[pfMs.length >> 1].toFixed(1)} / ${pfMs[Math.floor(pfMs.length * 0.95)].toFixed(1)} | see lantern eval | |`);
console.log(`\nFiles of the first "ownership" search, bytes as sent:\n`);
console.log('| system | file | bytes |\n|---|---|---|');
for (const [sys, run] of [['Pagefind', pfCold], ['Lantern', lnCold]]) {
  for (const f of run.files) console.log(`| ${sys} | ${f.path} | ${f.bytes} |`);
}
