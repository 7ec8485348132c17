// The wasm runtime in real headless Chromium: keyword results before the model, hybrid after,
// the same answers as the native engine, and clear errors for bad bundles.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { webRoot, serve, browser, cli, root } from './harness.mjs';

let server, chrome, page, webDir;

before(async () => {
  webDir = webRoot();
  server = await serve(webDir, { watched: true });
  chrome = await browser();
  page = await chrome.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(server.url + 'test.html');
  await page.waitForFunction(() => window.libReady === true);
});

after(async () => {
  await chrome?.close();
  server?.stop();
});

test('keyword search answers before the embedder has loaded', async () => {
  const r = await page.evaluate(async () => {
    // The query table is only fetched when asked for (loadQueryTable).
    window.idx = await window.Lantern.load('/site.lantern');
    const kw = window.idx.searchKeyword('max_file_bytes');
    const hybridAsked = await window.idx.search('max_file_bytes');
    return { ready: window.idx.semanticReady, kw, mode: hybridAsked.mode, info: window.idx.info };
  });
  assert.equal(r.ready, false);
  assert.equal(r.mode, 'keyword', 'hybrid falls back to keyword until the model is ready');
  // Four sections mention the setting; the one that defines it is a long code block.
  const top5 = r.kw.hits.slice(0, 5).map((h) => h.url);
  assert.ok(top5.includes('/configuration.html#keys'), top5.join(' '));
  assert.ok(r.info.chunks > 10 && r.info.dim === 384);
  for (const h of r.kw.hits) {
    assert.ok(h.highlights.length > 0, 'every hit highlights the identifier');
    for (const [s, e] of h.highlights) assert.equal(h.excerpt.slice(s, e).toLowerCase(), 'max_file_bytes');
  }
});

test('the query table gives approximate hybrid results before the model, as natively', async () => {
  const queries = ['how are vectors made smaller for storage', 'rebuild only the changed pages', 'bundel checksum'];
  const web = await page.evaluate(async (qs) => {
    const quick = await window.Lantern.load('/site.lantern');
    const attached = await quick.loadQueryTable();
    const out = {};
    for (const q of qs) out[q] = await quick.search(q, { k: 10 });
    out.keyword = await quick.search('chunk', { mode: 'keyword' });
    const none = await window.Lantern.load('/notable.lantern');
    const damaged = await window.Lantern.load('/damaged.lantern');
    return {
      attached,
      out,
      missing: await none.loadQueryTable(),
      missingMode: (await none.search(qs[0])).mode,
      damaged: await damaged.loadQueryTable(),
      damagedMode: (await damaged.search(qs[0])).mode,
    };
  }, queries);
  assert.equal(web.attached, true);
  for (const q of queries) {
    const r = web.out[q];
    assert.equal(r.mode, 'hybrid', q);
    assert.equal(r.approximate, true, q);
    assert.ok(r.hits.some((h) => h.vector), `${q}: vector evidence`);
    const native = JSON.parse(cli('query', 'out/site.lantern', q, '--json', '-k', '10', '--query-encoder', 'table'));
    assert.equal(native.approximate, true, q);
    assert.deepEqual(r.hits.map((h) => h.chunk), native.hits.map((h) => h.chunk), q);
    // The table's similarities are calibrated alike, so "no good match" agrees too.
    assert.equal(r.noGoodMatch, native.noGoodMatch, q);
  }
  assert.equal(web.out.keyword.approximate, false, 'keyword mode is never approximate');
  // No table, or a damaged one: keyword results, no error.
  assert.deepEqual([web.missing, web.missingMode], [false, 'keyword']);
  assert.deepEqual([web.damaged, web.damagedMode], [false, 'keyword']);
});

/** Why the model folder at `modelUrl` is refused ('loaded' when it is not). */
const refusal = (modelUrl) => page.evaluate(async (url) => {
  const l = await window.Lantern.load('/site.lantern');
  try {
    await l.loadSemantic({ modelUrl: url });
    return 'loaded';
  } catch (e) {
    return String(e.message || e);
  }
}, modelUrl);

test('a model other than the bundle\'s is refused from its manifest, before any download', async () => {
  const err = await refusal('/model-other/');
  // The files it names do not exist: a download attempt would fail with HTTP 404 instead.
  assert.match(err, /was built with model .* but this runtime has ffffffffffff/);
});

test('the bundle\'s model is refused from its manifest, before any download, when no packed file in its folder is named', async () => {
  // '../model/model.pack' exists: fetched, it would load; refused, it is never requested.
  const seen = server.requests.length;
  const escape = await refusal('/model-escape/');
  assert.match(escape, /file name "..\/model\/model.pack" is not a plain file name/);
  assert.match(await refusal('/model-unpacked/'), /publishes no packed model for browsers/);
  assert.deepEqual(server.requests.slice(seen).filter((p) => p.endsWith('.pack')), []);
});

test('a damaged model file is refused by its sha256 (the browser computes it), not loaded', async () => {
  const err = await refusal('/model-damaged/');
  assert.match(err, /packed model does not match the manifest's sha256/);
});

test('the embedder loads in a worker with byte progress, then search is hybrid', async () => {
  const r = await page.evaluate(async () => {
    const progress = [];
    const t0 = performance.now();
    await window.idx.loadSemantic({
      modelUrl: '/model/',
      onProgress: (p) => progress.push(p),
    });
    const ms = performance.now() - t0;
    const res = await window.idx.search('can I look things up without an internet connection');
    return { ready: window.idx.semanticReady, progress, ms, res };
  });
  assert.equal(r.ready, true);
  const model = r.progress.filter((p) => p.stage === 'model');
  assert.ok(model.length > 1, 'several progress events for the model');
  // Browsers get the packed model (model.pack), about half the model file.
  const packed = statSync(join(root, 'models/minilm/model.pack')).size;
  assert.equal(model.at(-1).loaded, packed, 'the whole packed model arrived');
  assert.equal(r.res.mode, 'hybrid');
  // The question shares no words with its answer: only the vector retriever can find it, and
  // fusion must keep that hit near the top.
  const urls = r.res.hits.map((h) => h.url);
  const i = urls.indexOf('/faq.html#does-it-work-offline');
  assert.ok(i >= 0 && i < 5, urls.join(' '));
  assert.equal(r.res.hits[i].vector.rank, 1);
  assert.equal(r.res.hits[i].keyword, null);
  console.log(`embedder ready in ${r.ms.toFixed(0)} ms`);
});

test("the site's pages share one model, built once, in a worker that outlives them", async () => {
  const ctx = await chrome.newContext();
  // A page of the site starts the embedder (or not: `shared: false`) and embeds a question.
  const open = async (init) => {
    const p = await ctx.newPage();
    if (init) await p.addInitScript(init);
    await p.goto(server.url + 'test.html');
    await p.waitForFunction(() => window.libReady === true);
    return p;
  };
  const run = (p, shared) => p.evaluate(async (shared) => {
    const { Embedder } = await import('/lantern/embedder.js');
    const l = await window.Lantern.load('/site.lantern');
    const e = Embedder.start({ modelUrl: '/model/', shared });
    await l.loadSemantic({ embedder: e });
    const vector = Array.from(await l.embed('where is the embedding cache kept'));
    return { shared: e.shared, reused: e.reused, vector };
  }, shared);
  try {
    const a = await open();
    const first = await run(a, true);
    assert.deepEqual([first.shared, first.reused], [true, false]);
    // Another page while the first is open: the model is the one built for it.
    const b = await open();
    const second = await run(b, true);
    assert.deepEqual([second.shared, second.reused], [true, true]);
    assert.deepEqual(second.vector, first.vector);
    // Every page closed, then the next one: the worker outlived them.
    await a.close();
    await b.close();
    await new Promise((r) => setTimeout(r, 1000));
    const c = await open();
    const third = await run(c, true);
    assert.deepEqual([third.shared, third.reused], [true, true]);
    // A worker of the page's own builds its own, and embeds the same.
    const own = await run(c, false);
    assert.deepEqual([own.shared, own.reused], [false, false]);
    assert.deepEqual(own.vector, first.vector);
    // A browser without shared workers: the page's own worker, started the same way.
    const d = await open(() => { Object.defineProperty(window, 'SharedWorker', { value: undefined }); });
    const without = await run(d, true);
    assert.deepEqual([without.shared, without.reused], [false, false]);
    assert.deepEqual(without.vector, first.vector);
  } finally {
    await ctx.close();
  }
});

test('a split bundle fetches only the shards a search needs and ranks as the whole bundle', async () => {
  const queries = ['max_file_bytes', 'reciprocal rank fusion', 'quantiz', '"no good match"', 'offline'];
  const r = await page.evaluate(async (qs) => {
    const shards = () => performance.getEntriesByType('resource')
      .map((e) => new URL(e.name).pathname).filter((p) => p.startsWith('/site.lantern.d/'));
    const whole = await window.Lantern.load('/site.lantern');
    const split = await window.Lantern.load('/site.lantern.d/meta.bin');
    const before = split.searchKeyword(qs[0]);
    const out = [];
    for (const q of qs) {
      const a = whole.searchKeyword(q);
      const b = await split.search(q, { mode: 'keyword' });
      out.push({ q, whole: a.hits.map((h) => [h.url, h.excerpt, h.score.toFixed(4)]), split: b.hits.map((h) => [h.url, h.excerpt, h.score.toFixed(4)]) });
    }
    const fetched = new Set(shards());
    const prefetched = await split.prefetchAll();
    const afterAll = new Set(shards());
    await split.search('stemming languages', { mode: 'keyword' });
    const afterMore = new Set(shards());
    return { before, out, fetched: [...fetched], prefetched, all: afterAll.size, more: afterMore.size };
  }, queries);
  assert.equal(r.before.hits.length, 0, 'nothing loaded yet: no hits');
  assert.ok(r.before.missing.length > 0 && r.before.missing.every((n) => /^terms-[0-9a-f]{16}-\d+\.bin$/.test(n)), r.before.missing.join());
  for (const { q, whole, split } of r.out) {
    assert.ok(whole.length > 0, q);
    assert.deepEqual(split, whole, q);
  }
  assert.ok(r.fetched.includes('/site.lantern.d/meta.bin'));
  assert.ok(!r.fetched.some((p) => p.includes('/vectors-')), 'keyword searches fetch no vectors');
  // The rest arrives with prefetchAll, after which searches need no more files.
  assert.ok(r.prefetched > 0, `prefetched ${r.prefetched}`);
  assert.equal(r.all, r.fetched.length + r.prefetched);
  assert.equal(r.more, r.all, 'nothing fetched after the whole bundle is in');
});

test('keyword analysis finds what readers type, as natively', async () => {
  const cases = {
    configurat: '/configuration.html#configuration-files',
    getElementById: '/dom.html#looking-up-nodes',
    // An identifier asked in words beats the page titled by some of them ("Element ids").
    'get element by id': '/dom.html#looking-up-nodes',
    // Some of its words: a page or heading named by them ("Element ids", "Elements") may rank
    // above the identifier's section, as titles outweigh text: all on the first screen.
    'element by id': ['/dom.html#looking-up-nodes', 3],
    naive: '/classifiers.html#naïve-bayes',
    'naïve': '/classifiers.html#naïve-bayes',
    'C++': '/languages.html#c',
    'C#': '/languages.html#c-1',
  };
  const web = await page.evaluate(async (qs) => {
    const idx = await window.Lantern.load('/analysis.lantern');
    return Object.fromEntries(qs.map((q) => [q, idx.searchKeyword(q, { k: 5 })]));
  }, Object.keys(cases));
  for (const [q, expected] of Object.entries(cases)) {
    const [want, within] = Array.isArray(expected) ? expected : [expected, 1];
    const urls = web[q].hits.slice(0, within).map((h) => h.url);
    assert.ok(urls.includes(want), `${q}: ${urls}`);
    assert.ok(web[q].hits[0].highlights.length > 0, `${q}: highlighted`);
    const native = JSON.parse(cli('query', join(webDir, 'analysis.lantern'), q, '--mode', 'keyword', '--json', '-k', '5'));
    assert.deepEqual(web[q].hits.map((h) => h.chunk), native.hits.map((h) => h.chunk), q);
  }
});

test('browser vectors equal native vectors of the packed model', async () => {
  // The browser runs the packed model (model.pack); natively `lantern embed` runs the same.
  const text = 'How do I keep the embedding cache between CI runs?';
  const native = JSON.parse(cli('embed', text));
  const web = await page.evaluate(async (t) => Array.from(await window.idx.embed(t)), text);
  assert.equal(web.length, 384);
  // Bit for bit as f32 (the JSON's decimals round back to the same f32); the same model
  // embedded the chunks at build time, so documents and questions meet exactly.
  const differ = web.filter((x, i) => Math.fround(native[i]) !== x).length;
  assert.equal(differ, 0, `${differ} of 384 values differ`);
});

test('browser and native engines rank identically', async () => {
  for (const q of ['how are vectors made smaller for storage', '"embedding cache"', 'conf', 'bundel checksum']) {
    const native = JSON.parse(cli('query', 'out/site.lantern', q, '--json', '-k', '10'));
    const web = await page.evaluate(async (q) => window.idx.search(q, { k: 10 }), q);
    assert.equal(web.mode, native.mode, q);
    assert.deepEqual(web.hits.map((h) => h.chunk), native.hits.map((h) => h.chunk), q);
    assert.equal(web.noGoodMatch, native.noGoodMatch, q);
  }
});

test('bad bundles are rejected with clear errors', async () => {
  const errors = await page.evaluate(async () => {
    const out = {};
    for (const url of ['/truncated.lantern', '/test.html', '/missing.lantern']) {
      try { await window.Lantern.load(url); out[url] = 'loaded'; } catch (e) { out[url] = String(e.message || e); }
    }
    return out;
  });
  assert.match(errors['/truncated.lantern'], /truncated/);
  assert.match(errors['/test.html'], /not a Lantern bundle/);
  assert.match(errors['/missing.lantern'], /404/);
});
