// A site generator's built pages (tests/corpus/built-site) indexed by `lantern build`, searched
// through the widget: filters in the JS API and as facets in the UI, and the matched words
// marked on the page a result opens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, cpSync, readdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, browser, cli, root } from './harness.mjs';

let chrome;
let server;

/** The demo site (runtime, UI, model) plus the fixture's pages under /built/ with the widget. */
function siteWithBuiltPages() {
  const dir = mkdtempSync(join(tmpdir(), 'lantern-built-'));
  cpSync(join(root, 'out/web'), dir, { recursive: true });
  const built = join(dir, 'built');
  cpSync(join(root, 'tests/corpus/built-site'), built, { recursive: true });
  cli('build', built, '--out', join(dir, 'built.lantern'), '--base-url', '/built/', '--quiet');
  const tag = '<script type="module" src="/lantern/widget.js"></script>'
    + '<lantern-search bundle="/built.lantern" model="/model/"></lantern-search>';
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.html')) writeFileSync(p, readFileSync(p, 'utf8').replace('</body>', `${tag}</body>`));
    }
  };
  walk(built);
  return dir;
}

before(async () => {
  chrome = await browser();
  server = await serve(siteWithBuiltPages());
});
after(async () => {
  await chrome?.close();
  server?.stop();
});

const shadow = (page, sel) => page.locator('lantern-search').first().locator(sel);

test('the JS API lists the facets and filters keyword and hybrid results', async () => {
  const page = await chrome.newPage();
  try {
    await page.goto(server.url + 'built/');
    const out = await page.evaluate(async () => {
      const { Lantern } = await import('/lantern/lantern.js');
      const lantern = await Lantern.load('/built.lantern');
      const urls = (r) => r.pages.map((p) => p.url);
      const all = urls(lantern.searchKeyword('export chart'));
      const v1 = urls(lantern.searchKeyword('export chart', { filters: { version: '1' } }));
      const v2 = urls(lantern.searchKeyword('export chart', { filters: { version: ['2'] } }));
      let unknown = null;
      try { lantern.searchKeyword('export', { filters: { verison: '1' } }); } catch (e) { unknown = e.message; }
      // Malformed filters are refused by name; a Map is read like an object.
      const malformed = [{ version: 1 }, { version: ['1', 2] }, 'version=1', ['1']].map((filters) => {
        try { lantern.searchKeyword('export', { filters }); return 'accepted'; } catch (e) { return e.message; }
      });
      const fromMap = urls(lantern.searchKeyword('export chart', { filters: new Map([['version', '1']]) }));
      await lantern.loadSemantic({ modelUrl: '/model/' });
      const hybrid = await lantern.search('how do I save a chart as a picture', { filters: { version: '1' } });
      const meta = lantern.searchKeyword('legacy_painter').pages[0].meta;
      return { facets: lantern.facets, all, v1, v2, unknown, malformed, fromMap, hybrid: { mode: hybrid.mode, urls: urls(hybrid) }, meta };
    });
    assert.deepEqual(out.facets, [{ key: 'version', values: [['2', 3], ['1', 1]] }]);
    assert.ok(out.all.includes('/built/v1/guide/') && out.all.includes('/built/v2/guide/'), out.all.join());
    assert.deepEqual(out.v1, ['/built/v1/guide/']);
    assert.ok(out.v2.length > 0 && !out.v2.includes('/built/v1/guide/'), out.v2.join());
    assert.match(out.unknown, /unknown filter "verison" \(known: version\)/);
    for (const m of out.malformed) assert.match(m, /filters must be \{ key: value or \[values\] \}/);
    assert.deepEqual(out.fromMap, ['/built/v1/guide/']);
    assert.equal(out.hybrid.mode, 'hybrid');
    assert.deepEqual(out.hybrid.urls, ['/built/v1/guide/']);
    assert.deepEqual(out.meta, [['edition', 'Skyline 1']]);
  } finally {
    await page.close();
  }
});

test('facets restrict the widget\'s results; the opened page marks the matched words', async () => {
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'built/guide/stations.html');
    await page.keyboard.press('/');
    const input = shadow(page, 'input');
    await input.waitFor();
    await input.fill('export chart');
    await shadow(page, '[role=option]').first().waitFor({ timeout: 10_000 });
    const facets = shadow(page, '.facet');
    assert.equal(await facets.count(), 2);
    assert.deepEqual(await facets.allTextContents(), ['23', '11']);
    const pages = async () => (await shadow(page, 'a.hit').evaluateAll((as) => as.map((a) => new URL(a.href).pathname)));
    assert.ok((await pages()).includes('/built/v2/guide/'));
    await facets.nth(1).click(); // version 1
    assert.equal(await facets.nth(1).getAttribute('aria-pressed'), 'true');
    await page.waitForFunction(() => {
      const root = document.querySelector('lantern-search').shadowRoot;
      const links = [...root.querySelectorAll('a.hit')].map((a) => new URL(a.href).pathname);
      return links.length > 0 && links.every((p) => p === '/built/v1/guide/');
    }, null, { timeout: 10_000 });
    const href = await shadow(page, 'a.hit').first().getAttribute('href');
    assert.match(href, /^\/built\/v1\/guide\/\?highlight=[^#]*export[^#]*#/);
    await shadow(page, 'a.hit').first().click();
    await page.waitForURL(/\/built\/v1\/guide\/\?highlight=/);
    await page.waitForFunction(() => Number(document.documentElement.dataset.lanternHighlights) > 0);
    const marks = await page.locator('mark.lantern-highlight').allTextContents();
    // The words the excerpt matched, identifiers whole, and their inflections.
    assert.ok(marks.includes('chart.export_png'), marks.join());
    assert.ok(marks.some((m) => /^charts$/i.test(m)), marks.join());
    // Only the content is marked, never the navigation around it.
    assert.equal(await page.locator('nav mark, header mark, footer mark').count(), 0);
  } finally {
    await ctx.close();
  }
});

test('a hostile highlight parameter is only ever text', async () => {
  const page = await chrome.newPage();
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  try {
    const evil = encodeURIComponent('<img src=x onerror=alert(1)> chart "onmouseover="alert(2)');
    await page.goto(`${server.url}built/v2/guide/?highlight=${evil}#exporting`);
    await page.waitForFunction(() => document.documentElement.dataset.lanternHighlights !== undefined);
    assert.equal(await page.locator('main img').count(), 0);
    assert.ok(await page.locator('mark.lantern-highlight').count() > 0, 'chart is still marked');
    assert.deepEqual(dialogs, []);
  } finally {
    await page.close();
  }
});
