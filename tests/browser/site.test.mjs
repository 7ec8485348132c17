// The reader's side in real headless Chromium: the demo site (out/web, from site/build.sh)
// served by `lantern serve`, searched through the <lantern-search> widget.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, cpSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, browser, cli, root } from './harness.mjs';

const shots = join(root, 'tests/browser/output');
mkdirSync(shots, { recursive: true });
let chrome;

before(async () => { chrome = await browser(); });
after(async () => { await chrome?.close(); });

const shadow = (page, sel) => page.locator('lantern-search').first().locator(sel);

async function openAndType(page, text) {
  await page.keyboard.press('/');
  const input = shadow(page, 'input');
  await input.waitFor();
  await input.fill(text);
  return input;
}

/** A copy of the built demo site, so a test can stop its server or add pages. */
function siteCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'lantern-site-'));
  cpSync(join(root, 'out/web'), dir, { recursive: true });
  return dir;
}

/**
 * A fresh page of a served copy of the demo site, controlled by its service worker, and the
 * paths in the worker's cache of content-addressed files.
 */
async function controlledPage() {
  const server = await serve(siteCopy());
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  const cached = () => page.evaluate(async () =>
    (await (await caches.open('lantern-immutable-v1')).keys()).map((r) => new URL(r.url).pathname));
  try {
    await page.goto(server.url + 'index.html');
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.reload();
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  } catch (err) {
    await ctx.close();
    server.stop();
    throw err;
  }
  return { server, ctx, page, cached };
}

/**
 * Runs `fn` on a fresh page of a served copy of the demo site, with the paths requested from
 * the server (by the page and by every worker: the embedder's is shared, not the page's).
 */
async function onDemoSite(fn) {
  const server = await serve(siteCopy(), { watched: true });
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'index.html');
    await fn(page, server.requests);
  } finally {
    await ctx.close();
    server.stop();
  }
}

test('nothing loads before focus; keyword results first, then hybrid in place when the question needs meaning', () => onDemoSite(async (page, requests) => {
  await page.waitForTimeout(300);
  assert.ok(!requests.some((p) => /\.(wasm|lantern|onnx|pack)$/.test(p)), `loaded early: ${requests}`);
  // No section holds every word of this paraphrase: the model is fetched for it.
  const input = await openAndType(page, 'can I look things up without an internet connection');
  // Keyword results, or already the query table's quick meaning: both come before the model.
  await shadow(page, '.mode-used').filter({ hasText: /^keyword (\+ quick meaning )?results$/ }).waitFor({ timeout: 10_000 });
  await page.screenshot({ path: join(shots, 'keyword-results.png') });
  assert.ok(await shadow(page, '[role=option]').count() > 0);
  await shadow(page, '.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 60_000 });
  await page.screenshot({ path: join(shots, 'hybrid-results.png') });
  assert.equal(await input.inputValue(), 'can I look things up without an internet connection', 'the query survives the upgrade');
  assert.match(await shadow(page, '.status').textContent(), /Hybrid/);
  const listbox = shadow(page, '[role=listbox]');
  assert.equal(await listbox.count(), 1);
  assert.equal(await input.getAttribute('aria-expanded'), 'true');
  assert.ok(requests.some((p) => p.endsWith('.pack')), 'packed model fetched after focus');
  assert.ok(!requests.some((p) => p.endsWith('.onnx')), 'the full model is never fetched');
  assert.ok(requests.some((p) => p.endsWith('/search.lantern.query')), 'query table fetched');
}));

test('a question whose words a section holds: no query table or model download, until meaning is chosen', () => onDemoSite(async (page, requests) => {
  await openAndType(page, 'reciprocal rank fusion');
  await shadow(page, '.mode-used').filter({ hasText: /^keyword results$/ }).waitFor({ timeout: 30_000 });
  await shadow(page, '.status[data-stage=ready]').waitFor({ timeout: 10_000 });
  await page.waitForTimeout(1500);
  const meaning = /\.onnx$|\.pack$|embed_wasm|embed-worker|\.lantern\.query$/;
  assert.ok(!requests.some((p) => meaning.test(p)), `meaning requested: ${requests.join(' ')}`);
  assert.match(await shadow(page, '.status').textContent(), /loads when a question needs it/);
  assert.ok(await shadow(page, '[role=option]').count() > 0);
  // Choosing meaning is intent: the model arrives and the results upgrade in place.
  await shadow(page, 'button.mode').filter({ hasText: 'Semantic' }).click();
  await shadow(page, '.status[data-stage=hybrid]').waitFor({ timeout: 60_000 });
  assert.ok(requests.some((p) => p.endsWith('.pack')), 'model fetched once meaning was chosen');
}));

test('typing a key at a time fetches the shards the final query needs, as pasting it does', async () => {
  const shards = async (enter) => {
    let fetched = [];
    await onDemoSite(async (page, requests) => {
      await page.keyboard.press('/');
      const input = shadow(page, 'input');
      await input.waitFor();
      // The UI and the index load first, as when a reader starts typing into an open dialog.
      await shadow(page, '.status[data-stage=keyword], .status[data-stage=ready]').first().waitFor({ timeout: 30_000 });
      await enter(input);
      await shadow(page, '[role=option]').first().waitFor({ timeout: 30_000 });
      await shadow(page, '.mode-used').filter({ hasText: /^keyword results$/ }).waitFor({ timeout: 10_000 });
      await page.waitForTimeout(500);
      // Before the offline prefetch, which waits for a pause of seconds.
      fetched = requests.filter((p) => /\.lantern\.d\/(terms|text|vectors)-/.test(p));
      // One wasm module before the first result: the UI's, which carries the search core
      // (neither the stand-alone core nor the answer module, which waits for a question).
      assert.deepEqual(requests.filter((p) => p.endsWith('.wasm')).map((p) => p.replace(/-[0-9a-f]{12}\.wasm$/, '')),
        ['/lantern/ui/lantern_ui_bg'], requests.join(' '));
    });
    return fetched;
  };
  const q = 'reciprocal rank fusion';
  const pasted = await shards((input) => input.fill(q));
  // 40 ms a key: faster than any reader, so no prefix in between may cost a fetch.
  const typed = await shards((input) => input.pressSequentially(q, { delay: 40 }));
  assert.ok(pasted.length > 0, 'the query needs shards');
  assert.deepEqual([...new Set(typed)].sort(), [...new Set(pasted)].sort(), `typed ${typed.join(' ')}`);
});

test('a first screen of results, then the rest of the list, announced once with its final count', () => onDemoSite(async (page, requests) => {
  await page.keyboard.press('/');
  await shadow(page, 'input').waitFor();
  await shadow(page, '.status[data-stage=keyword], .status[data-stage=ready]').first().waitFor({ timeout: 30_000 });
  // Every redraw of the list, with what the live region says at that moment.
  await page.evaluate(() => {
    const root = document.querySelector('lantern-search').shadowRoot;
    window.seen = [];
    new MutationObserver(() => {
      const hits = [...root.querySelectorAll('a.hit')].map((a) => a.getAttribute('href'));
      const said = root.querySelector('.sr-only[role=status]').textContent;
      const last = window.seen.at(-1);
      if (!last || last.hits.join() !== hits.join() || last.said !== said) window.seen.push({ hits, said });
    }).observe(root, { childList: true, subtree: true, characterData: true });
  });
  const before = requests.length;
  await shadow(page, 'input').fill('search results');
  await page.waitForFunction(() => window.seen.some((s) => s.hits.length > 0 && s.said));
  const seen = await page.evaluate(() => window.seen.filter((s) => s.hits.length > 0));
  const first = seen[0];
  const full = seen.find((s) => s.said);
  assert.ok(first.hits.length < full.hits.length, `first screen, then the rest: ${JSON.stringify(seen)}`);
  assert.equal(first.said, '', 'the first screen is not announced: its count is about to change');
  assert.equal(first.hits[0], full.hits[0], 'the rest of the list comes below the first result');
  assert.ok(full.said.includes(String(full.hits.length)), `announced: ${full.said}`);
  assert.equal(seen.filter((s) => s.said).length, 1, `announced once: ${JSON.stringify(seen)}`);
  // The rest of the list needed text blocks of its own, fetched after the first screen's.
  const texts = requests.slice(before).filter((p) => /\.lantern\.d\/text-/.test(p));
  assert.ok(texts.length > 1, texts.join(' '));
}));

test("a question's word rows are fetched while the model builds, not after it", () => onDemoSite(async (page, requests) => {
  const rows = () => requests.filter((p) => /\/rows-[0-9a-f]+\.bin$/.test(p)).length;
  const q = 'can I look things up without an internet connection';
  await page.evaluate(async (q) => {
    const { Lantern } = await import('/lantern/lantern.js');
    window.l = await Lantern.load('/search.lantern.d/meta.bin');
    // Searched before the model: the question the model will be asked first.
    await window.l.search(q);
    await window.l.loadSemantic({ modelUrl: '/model/', shared: false });
  }, q);
  // Requests the worker made before the model was ready may reach the server after (six at a
  // time per host): counted once they stop arriving.
  let atReady = rows();
  for (let quiet = 0; quiet < 5; ) {
    await new Promise((r) => setTimeout(r, 100));
    quiet = rows() === atReady ? quiet + 1 : 0;
    atReady = rows();
  }
  assert.ok(atReady > 0, 'its rows were requested by the time the model was ready');
  const r = await page.evaluate((q) => window.l.search(q), q);
  assert.equal(r.mode, 'hybrid');
  assert.equal(rows(), atReady, 'no row requested after the model was ready');
}));

test('keyboard: arrows move, Enter opens the section, Esc closes', async () => {
  const server = await serve(siteCopy());
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'index.html');
    await page.keyboard.press('Control+k');
    const input = shadow(page, 'input');
    await input.waitFor();
    await input.fill('heading anchors slugs');
    // Past the first upgrade (keyword -> quick meaning), so the list is what the reader sees
    // settle; an upgrade under the arrow keys keeps the selected section (unit-tested).
    await shadow(page, '.mode-used').filter({ hasText: /quick meaning|hybrid results/ }).waitFor({ timeout: 30_000 });
    await page.keyboard.press('ArrowDown');
    const active = await input.getAttribute('aria-activedescendant');
    assert.equal(active, 'lantern-opt-1');
    const href = await shadow(page, `#${active}`).getAttribute('href');
    await page.screenshot({ path: join(shots, 'keyboard-selection.png') });
    await Promise.all([page.waitForURL((u) => u.href.endsWith(href)), page.keyboard.press('Enter')]);
    const hash = new URL(page.url()).hash.slice(1);
    if (hash) assert.equal(await page.locator(`[id="${hash}"]`).count(), 1, `anchor #${hash} exists on the page`);
    await page.keyboard.press('/');
    await shadow(page, 'input').waitFor();
    await page.keyboard.press('Escape');
    await shadow(page, '.overlay').waitFor({ state: 'hidden' });
  } finally {
    await ctx.close();
    server.stop();
  }
});

test('pointer: the mode switch, "why?", hover, a click that opens a section and remembers the query, the recent list, the close button', async () => {
  const server = await serve(siteCopy());
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  const mode = (name) => shadow(page, 'button.mode').filter({ hasText: name });
  try {
    await page.goto(server.url + 'index.html');
    await openAndType(page, 'reciprocal rank fusion');
    await shadow(page, '.mode-used').filter({ hasText: /^keyword results$/ }).waitFor({ timeout: 30_000 });
    await mode('Keyword').click();
    assert.equal(await mode('Keyword').getAttribute('aria-checked'), 'true');
    assert.equal(await mode('Hybrid').getAttribute('aria-checked'), 'false');
    // "why?" shows its row's ranking detail, and hides it again.
    const row = shadow(page, '.hit-row').first();
    await row.locator('.why').click();
    assert.match(await row.locator('.explain').textContent(),
      /^keyword: #\d+ \(BM25 \d+\.\d\d\) · semantic: not in top 50 · fused score \d+\.\d{4}$/);
    await row.locator('.why').click();
    assert.equal(await row.locator('.explain').count(), 0);
    // The row under the pointer is the active option.
    await shadow(page, 'a.hit').nth(1).hover();
    assert.equal(await shadow(page, 'input').getAttribute('aria-activedescendant'), 'lantern-opt-1');
    assert.equal(await shadow(page, '#lantern-opt-1').getAttribute('aria-selected'), 'true');
    assert.equal(await shadow(page, '#lantern-opt-0').getAttribute('aria-selected'), 'false');
    // A click opens the section; the query is remembered and reruns from the recent list.
    const href = await shadow(page, 'a.hit').first().getAttribute('href');
    await Promise.all([page.waitForURL((u) => u.href.endsWith(href)), shadow(page, 'a.hit').first().click()]);
    await page.goto(server.url + 'index.html');
    await page.keyboard.press('/');
    const recent = shadow(page, 'button.recent-item').filter({ hasText: 'reciprocal rank fusion' });
    await recent.click({ timeout: 10_000 });
    assert.equal(await shadow(page, 'input').inputValue(), 'reciprocal rank fusion');
    await shadow(page, 'a.hit').first().waitFor({ timeout: 30_000 });
    await shadow(page, 'button.close').click();
    await shadow(page, '.overlay').waitFor({ state: 'hidden' });
  } finally {
    await ctx.close();
    server.stop();
  }
});

test('no good match is said plainly, with the closest sources', async () => {
  const server = await serve(siteCopy());
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'index.html');
    await openAndType(page, 'what is the weather in Lisbon tomorrow');
    await shadow(page, '.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 60_000 });
    await shadow(page, '.no-match').waitFor();
    assert.ok(await shadow(page, '[role=option]').count() > 0, 'closest sources still listed');
    await page.screenshot({ path: join(shots, 'no-good-match.png') });
  } finally {
    await ctx.close();
    server.stop();
  }
});

test('hostile document text is shown as text and runs nothing', async () => {
  const dir = siteCopy();
  const docs = mkdtempSync(join(tmpdir(), 'lantern-hostile-'));
  writeFileSync(join(docs, 'index.md'), '# Home\n\nWelcome.\n');
  writeFileSync(join(docs, 'evil.md'), '# Evil page\n\nZebrafinch <img src=x onerror="window.__xss=1"> and <script>window.__xss=2</script> here, quoted: `<img src=x onerror="window.__xss=4">`.\n\n[click](javascript:window.__xss=3)\n');
  cli('site', docs, '--out', dir, '--title', 'Hostile');
  const server = await serve(dir);
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'index.html');
    await openAndType(page, 'zebrafinch');
    const hit = shadow(page, '[role=option]').first();
    await hit.waitFor();
    const text = await hit.textContent();
    assert.match(text, /<img src=x onerror=/, 'markup shown literally');
    assert.equal(await shadow(page, '[role=option] img, [role=option] script').count(), 0);
    await page.screenshot({ path: join(shots, 'hostile-text.png') });
    await page.goto(server.url + 'evil.html');
    await page.locator('a', { hasText: 'click' }).click();
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.match(await page.locator('main').textContent(), /<script>window.__xss=2<\/script>/);
  } finally {
    await ctx.close();
    server.stop();
  }
});

test('Save-Data: quick meaning from the query table, and no model download', async () => {
  const server = await serve(siteCopy());
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  await page.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, 'connection', { get: () => ({ saveData: true }) });
  });
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  try {
    await page.goto(server.url + 'index.html');
    await openAndType(page, 'make the index files smaller');
    await shadow(page, '.mode-used').filter({ hasText: 'keyword + quick meaning results' }).waitFor({ timeout: 10_000 });
    await shadow(page, '.status').filter({ hasText: 'Save-Data' }).waitFor({ timeout: 10_000 });
    assert.ok(await shadow(page, '[role=option]').count() > 0);
    await page.waitForTimeout(1_000);
    assert.ok(!requests.some((p) => /\.onnx$|\.pack$|embed_wasm|embed-worker/.test(p)), `model requested: ${requests.join(' ')}`);
    await page.screenshot({ path: join(shots, 'save-data.png') });
  } finally {
    await ctx.close();
    server.stop();
  }
});

test("a deploy's old shards leave the reader's cache; the current ones and other bundles' stay", async () => {
  const { server, ctx, page, cached } = await controlledPage();
  try {
    // Shards an earlier build left, of this bundle and of another one on the same site.
    const stale = '/search.lantern.d/terms-00000000000000ff-0.bin';
    const other = '/v1/search.lantern.d/terms-00000000000000ff-0.bin';
    await page.evaluate(async (paths) => {
      const cache = await caches.open('lantern-immutable-v1');
      for (const p of paths) await cache.put(p, new Response('old'));
    }, [stale, other]);
    assert.ok((await cached()).includes(stale));
    await openAndType(page, 'bundle format');
    await shadow(page, '.mode-used').first().waitFor({ timeout: 30_000 });
    let now = await cached();
    for (let i = 0; i < 100 && now.includes(stale); i++) {
      await page.waitForTimeout(100);
      now = await cached();
    }
    assert.ok(!now.includes(stale), now.join(' '));
    assert.ok(now.includes(other), now.join(' '));
    assert.ok(now.some((p) => /^\/search\.lantern\.d\/terms-[0-9a-f]{16}-\d+\.bin$/.test(p)), now.join(' '));
  } finally {
    await ctx.close();
    server.stop();
  }
});

test("a new model's arrival drops the old model's word rows from the reader's cache", async () => {
  const { server, ctx, page, cached } = await controlledPage();
  try {
    // What an earlier deploy's model left: its pack and a row file, and another folder's row.
    const old = ['/model/model-000000000000.pack', '/model/rows-00000000000a.bin'];
    const elsewhere = '/v1/model/rows-00000000000b.bin';
    await page.evaluate(async (paths) => {
      const cache = await caches.open('lantern-immutable-v1');
      for (const p of paths) await cache.put(p, new Response('old'));
    }, [...old, elsewhere]);
    await openAndType(page, 'can I look things up without an internet connection');
    await shadow(page, '.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 60_000 });
    const now = await cached();
    for (const p of old) assert.ok(!now.includes(p), `${p} still in ${now.join(' ')}`);
    assert.ok(now.includes(elsewhere), now.join(' '));
    // The new model and the rows its question needed are there.
    assert.ok(now.some((p) => /^\/model\/model-[0-9a-f]{12}\.pack$/.test(p)), now.join(' '));
    assert.ok(now.some((p) => /^\/model\/rows-[0-9a-f]{12}\.bin$/.test(p) && !old.includes(p)), now.join(' '));
  } finally {
    await ctx.close();
    server.stop();
  }
});

test('offline: with the server stopped, a reload still searches', async () => {
  const dir = siteCopy();
  const server = await serve(dir);
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'index.html');
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.reload();
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
    // A question that needs meaning, so the model is fetched (and cached) on this visit.
    await openAndType(page, 'how do hits for exact words and for meaning get merged');
    await shadow(page, '.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 60_000 });
    // The first query fetched only its own word rows; every other row file follows in the
    // background, so that any question embeds offline.
    const rows = readdirSync(join(dir, 'model')).filter((f) => /^rows-[0-9a-f]{12}\.bin$/.test(f));
    assert.ok(rows.length > 100, `${rows.length} row files`);
    const rowsCached = () => page.evaluate(async () => (await (await caches.open('lantern-immutable-v1')).keys())
      .filter((r) => /\/model\/rows-[0-9a-f]{12}\.bin$/.test(r.url)).length);
    let held = await rowsCached();
    for (let i = 0; i < 300 && held < rows.length; i++) {
      await page.waitForTimeout(100);
      held = await rowsCached();
    }
    assert.equal(held, rows.length);
    server.stop();
    await new Promise((r) => setTimeout(r, 300));
    await page.reload();
    // Every word found, but the model is in the cache: it loads at once, offline.
    await openAndType(page, 'quantization scale');
    await shadow(page, '.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 60_000 });
    const first = await shadow(page, '[role=option] .crumb').first().textContent();
    assert.match(first, /Quantization|Bundle format/);
    // That model may still be built in the site's shared worker; a page of its own builds it
    // again from the cache, offline, as after the shared worker has ended.
    const own = await ctx.newPage();
    await own.addInitScript(() => { Object.defineProperty(window, 'SharedWorker', { value: undefined }); });
    await own.goto(server.url + 'index.html');
    await openAndType(own, 'can I look things up without an internet connection');
    await shadow(own, '.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 60_000 });
    await own.close();
    // Caches are versioned and the model is held under its content-addressed name.
    const cached = await page.evaluate(async () => {
      const names = await caches.keys();
      const paths = async (name) => (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname);
      const versioned = names.find((n) => n.startsWith('lantern-static-'));
      return { names, immutable: await paths('lantern-immutable-v1'), static: versioned ? await paths(versioned) : [] };
    });
    assert.ok(cached.names.some((n) => /^lantern-static-[0-9a-f]{12}$/.test(n)), cached.names.join(' '));
    assert.ok(cached.immutable.some((p) => /^\/model\/model-[0-9a-f]{12}\.pack$/.test(p)), cached.immutable.join(' '));
    // So are the wasm modules (served from the cache, Chromium can keep their compiled code)
    // and the bundle's shards; neither is kept twice in the versioned cache.
    for (const re of [/^\/lantern\/pkg\/lantern_embed_wasm_bg-[0-9a-f]{12}\.wasm$/,
      /^\/lantern\/ui\/lantern_ui_bg-[0-9a-f]{12}\.wasm$/, /^\/search\.lantern\.d\/terms-[0-9a-f]{16}-\d+\.bin$/]) {
      assert.ok(cached.immutable.some((p) => re.test(p)), `${re} not in ${cached.immutable.join(' ')}`);
    }
    assert.deepEqual(cached.static.filter((p) => /\.wasm$|\.bin$/.test(p) && !p.endsWith('/meta.bin')), []);
    await page.screenshot({ path: join(shots, 'offline-search.png') });
  } finally {
    await ctx.close();
    server.stop();
  }
});
