// A site owner's whole path, as that owner: from the npm package alone (dist/package.sh), in an
// empty folder with no repository, no cargo and no model on PATH or disk. An MkDocs site (its
// default theme) and an mdBook site are built by the real generators, following the recipes of
// site/docs/generators/ (the printed tags in MkDocs' overrides/main.html and mdBook's
// theme/head.hbs); `npx lantern build` writes search into them; a reader types in Chromium.
// The Python wheel is installed into a fresh virtualenv and runs the same command.
// Needs LANTERN_DIST (the packages) and the generators tests/html/build-sites.sh installs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, statSync, existsSync, cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { audit, browser, ownerMachine, ownerProject, root, serveWith } from './harness.mjs';

const dist = process.env.LANTERN_DIST;
const mkdocs = join(root, 'tests/html/.venv/bin/mkdocs');
const mdbook = join(root, '.tools/bin/mdbook');
const cargoBook = join(root, '../shared/corpora/cargo-book/src');
const skip = !dist ? 'LANTERN_DIST is not set (bash dist/package.sh builds the packages)'
  : !existsSync(mkdocs) || !existsSync(mdbook) ? 'the generators are not installed (tests/html/build-sites.sh)'
    : !existsSync(cargoBook) ? `the Cargo book is not at ${cargoBook}` : false;

// The owner's machine: system tools only. No ~/.cargo/bin, no checkout, no model folder.
const machine = skip ? null : ownerMachine('lantern-owner-');
const { home, env, run } = machine ?? { home: '', env: {}, run: null };

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out); else out.push(p);
  }
  return out;
}

let owner;
let chrome;
const servers = [];
const timings = {};

before(async () => {
  if (skip) return;
  owner = ownerProject(machine, dist, 'docs-site');
  // MkDocs, default theme, over the Cargo book's markdown (generators/mkdocs.md).
  writeFileSync(join(owner, 'mkdocs.yml'), `site_name: Cargo\ndocs_dir: ${cargoBook}\nsite_dir: site\n`
    + 'theme:\n  name: mkdocs\n  custom_dir: overrides\n');
  mkdirSync(join(owner, 'overrides'));
  run(mkdocs, ['build', '--quiet'], owner);
  const t = Date.now();
  timings.buildLog = run('npx', ['lantern', 'build', 'site/', '--quiet'], owner);
  timings.coldMs = Date.now() - t;
  // The printed tags, into the theme's head, once.
  timings.snippet = readFileSync(join(owner, 'site/lantern/snippet.html'), 'utf8');
  writeFileSync(join(owner, 'overrides/main.html'),
    `{% extends "base.html" %}\n{% block extrahead %}\n${timings.snippet}{% endblock %}\n`);
  chrome = await browser();
});
after(async () => {
  for (const s of servers) s.stop();
  await chrome?.close();
});

test('npx lantern build writes everything under site/lantern/, and no embedding cache', { skip }, () => {
  const site = join(owner, 'site');
  assert.match(timings.buildLog, /published search into .*site\/lantern/);
  assert.match(timings.buildLog, /<script type="module" src="\/lantern\/widget\.js"><\/script>/);
  for (const f of ['snippet.html', 'widget.js', 'sw.js', 'index.html', 'search.lantern.d/meta.bin', 'model/manifest.json']) {
    assert.ok(existsSync(join(site, 'lantern', f)), f);
  }
  // One form of the bundle: the split one, which the widget reads.
  assert.ok(!existsSync(join(site, 'lantern/search.lantern')), 'no whole bundle file besides the split form');
  const files = walk(site);
  const caches = walk(join(home, '.cache/lantern')).filter((f) => f.endsWith('.cache'));
  assert.equal(caches.length, 1, 'one cache, in the user cache folder');
  const cacheName = caches[0].split('/').pop();
  const inSite = files.filter((f) => f.endsWith('.cache') || f.endsWith(cacheName));
  assert.deepEqual(inSite, [], 'no embedding cache under site/');
  const published = files.filter((f) => f.startsWith(join(site, 'lantern')));
  const bytes = published.reduce((n, f) => n + statSync(f).size, 0);
  console.log(`# published: ${published.length} files, ${(bytes / 1048576).toFixed(1)} MiB; cold build ${(timings.coldMs / 1000).toFixed(1)} s`);
});

test('the next deploy: the generator wipes its output, nothing is embedded again', { skip }, () => {
  run(mkdocs, ['build', '--quiet'], owner);
  assert.ok(!existsSync(join(owner, 'site/lantern')), 'mkdocs build wiped site/');
  assert.match(readFileSync(join(owner, 'site/index.html'), 'utf8'), /<script type="module" src="\/lantern\/widget\.js">/);
  const t = Date.now();
  const log = run('npx', ['lantern', 'build', 'site/', '--quiet'], owner);
  console.log(`# rebuild after the generator: ${((Date.now() - t) / 1000).toFixed(1)} s; ${log.split('\n')[0]}`);
  assert.match(log, / \(0 embedded, \d+ from cache/);
});

/** The pages the widget lists, in order (each result link's path). */
async function resultPages(page) {
  const hrefs = await page.locator('lantern-search').first().locator('a.hit').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  return [...new Set(hrefs.map((h) => new URL(h, 'http://x').pathname))];
}

/** Opens search with Ctrl-K and types `text` a key at a time; the page must not move. */
async function typeInWidget(page, text) {
  const before = page.url();
  await page.keyboard.press('Control+k');
  const input = page.locator('lantern-search').first().locator('input');
  await input.waitFor();
  await page.keyboard.type(text, { delay: 120 });
  await page.waitForTimeout(500);
  assert.equal(page.url(), before, `typing "${text}" moved the page`);
  assert.equal(await input.inputValue(), text);
  return input;
}

test('MkDocs default theme: Ctrl-K, "cargo publish" typed, its page first; a paraphrase turns hybrid; the theme keeps its keys', { skip }, async () => {
  const server = await serveWith(join(owner, 'node_modules/.bin/lantern'), join(owner, 'site'), env);
  servers.push(server);
  const page = await chrome.newPage();
  try {
    await page.goto(server.url + 'guide/');
    await typeInWidget(page, 'cargo publish');
    await page.locator('lantern-search').first().locator('a.hit').first().waitFor({ timeout: 30_000 });
    // The command's own page first, once the results of the last key are shown.
    let pages = [];
    for (let i = 0; i < 40 && pages[0] !== '/commands/cargo-publish/'; i += 1) {
      await page.waitForTimeout(250);
      pages = await resultPages(page);
    }
    console.log(`# "cargo publish" typed: ${pages.slice(0, 3).join(', ')}`);
    assert.equal(pages[0], '/commands/cargo-publish/', pages.join());
    // The dialog on a real generator's page, as axe-core reads it (the theme's own markup is
    // MkDocs', not ours: only the widget is audited).
    const found = await audit(page, 'MkDocs page, results', 'lantern-search');
    assert.deepEqual(found.map((v) => `${v.impact} ${v.id}: ${v.nodes[0]}`), []);
    // A paraphrase: the model arrives and the results turn hybrid.
    const input = page.locator('lantern-search').first().locator('input');
    await input.fill('');
    await page.keyboard.type('how do I upload my package so others can depend on it', { delay: 20 });
    await page.locator('lantern-search').first().locator('.mode-used').filter({ hasText: 'hybrid results' }).waitFor({ timeout: 60_000 });
    mkdirSync(join(root, 'tests/browser/output'), { recursive: true });
    await page.screenshot({ path: join(root, 'tests/browser/output/owner-mkdocs.png') });
    // Escape closes the dialog; outside it the theme's own "n" still moves to the next page.
    await page.keyboard.press('Escape');
    await page.evaluate(() => document.activeElement?.blur());
    const here = page.url();
    await page.keyboard.press('n');
    await page.waitForURL((u) => u.href !== here, { timeout: 5_000 });
  } finally {
    await page.close();
  }
});

test('mdBook: typing n, p, s and arrows in the dialog leaves the book where it is', { skip }, async () => {
  const book = join(home, 'book');
  mkdirSync(book);
  // generators/mdbook.md: the printed tags in theme/head.hbs. A few of the book's chapters
  // (the whole book was indexed above, through MkDocs).
  const src = join(book, 'src');
  const chapters = ['guide/index.md', 'guide/creating-a-new-project.md', 'commands/cargo-publish.md',
    'commands/cargo-build.md', 'commands/cargo-package.md', 'reference/publishing.md'];
  for (const c of chapters) {
    mkdirSync(dirname(join(src, c)), { recursive: true });
    cpSync(join(cargoBook, c), join(src, c));
  }
  writeFileSync(join(src, 'SUMMARY.md'), `# Summary\n\n${chapters.map((c) => `- [${c}](${c})`).join('\n')}\n`);
  writeFileSync(join(book, 'book.toml'), '[book]\ntitle = "Cargo"\n[output.html]\n');
  mkdirSync(join(book, 'theme'));
  writeFileSync(join(book, 'theme/head.hbs'), timings.snippet);
  execFileSync(mdbook, ['build', book, '-d', join(book, 'out')], { env, stdio: 'ignore' });
  run('npx', ['lantern', 'build', join(book, 'out'), '--quiet'], owner);
  assert.match(readFileSync(join(book, 'out/guide/index.html'), 'utf8'), /<lantern-search bundle=/);
  const server = await serveWith(join(owner, 'node_modules/.bin/lantern'), join(book, 'out'), env);
  servers.push(server);
  const page = await chrome.newPage();
  try {
    await page.goto(server.url + 'guide/index.html');
    await typeInWidget(page, 'cargo publish');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(500);
    assert.match(page.url(), /guide\/index\.html$/);
    await page.locator('lantern-search').first().locator('a.hit').first().waitFor({ timeout: 30_000 });
    const pages = await resultPages(page);
    assert.ok(pages.slice(0, 3).includes('/commands/cargo-publish.html'), pages.join());
  } finally {
    await page.close();
  }
});

test('the Python wheel: pip install into a fresh virtualenv puts a working lantern on PATH', { skip }, () => {
  // This machine's wheel (dist also holds an aarch64 one after LANTERN_AARCH64=1).
  const wheel = readdirSync(dist).find((f) => f.endsWith('_x86_64.whl'));
  const venv = join(home, 'venv');
  run('python3', ['-m', 'venv', venv], home);
  run(join(venv, 'bin/pip'), ['install', '--quiet', '--no-index', '--disable-pip-version-check', join(dist, wheel)], home);
  // A few of the MkDocs site's pages (a new folder is a new cache: the whole book would be
  // embedded again, which the npm test above already timed).
  const site = join(home, 'py-site');
  for (const p of ['index.html', 'guide/index.html', 'commands/cargo-publish/index.html']) {
    mkdirSync(dirname(join(site, p)), { recursive: true });
    cpSync(join(owner, 'site', p), join(site, p));
  }
  const log = run(join(venv, 'bin/lantern'), ['build', site, '--quiet'], home);
  assert.match(log, /published search into/);
  assert.ok(existsSync(join(site, 'lantern/snippet.html')));
  // Installs on any Linux x86-64 CI runs on, old glibc or musl: the binary is static.
  assert.match(wheel, /-py3-none-manylinux_2_17_x86_64\.manylinux2014_x86_64\.musllinux_1_1_x86_64\.whl$/);
  assert.ok(!hasInterpreter(join(venv, 'bin/lantern')), 'the installed lantern asks for no dynamic loader');
});

/** Whether an ELF64 file has a PT_INTERP program header (a dynamically linked executable). */
function hasInterpreter(path) {
  const b = readFileSync(path);
  const phoff = Number(b.readBigUInt64LE(0x20));
  const size = b.readUInt16LE(0x36);
  const count = b.readUInt16LE(0x38);
  return Array.from({ length: count }, (_, i) => b.readUInt32LE(phoff + i * size)).includes(3);
}

test('a site in German gets the UI module with every stemmer; an English one the smaller one', { skip }, async () => {
  const site = join(home, 'de-site');
  mkdirSync(site);
  const page = (title, body) => `<!doctype html><html lang="de"><head><meta charset="utf-8"><title>${title}</title>${timings.snippet}</head>`
    + `<body><main><h1>${title}</h1><p>${body}</p></main></body></html>`;
  writeFileSync(join(site, 'index.html'), page('Willkommen', 'Diese Seite erklärt, wie man die Werkzeuge installiert und einrichtet.'));
  writeFileSync(join(site, 'lager.html'), page('Lagerhäuser', 'In den Lagerhäusern werden die Pakete sortiert, bevor sie verschickt werden.'));
  run('npx', ['lantern', 'build', site, '--quiet'], owner);
  const wasm = (dir) => readdirSync(join(dir, 'lantern/ui')).filter((f) => f.endsWith('.wasm'));
  const [de] = wasm(site);
  const [en] = wasm(join(owner, 'site'));
  assert.ok(de && en && de !== en, `${de} / ${en}`);
  assert.ok(statSync(join(site, 'lantern/ui', de)).size > statSync(join(owner, 'site/lantern/ui', en)).size);
  assert.ok(!existsSync(join(site, 'lantern/ui-intl')), 'only the chosen module is published');
  const server = await serveWith(join(owner, 'node_modules/.bin/lantern'), site, env);
  servers.push(server);
  const tab = await chrome.newPage();
  try {
    await tab.goto(server.url + 'index.html');
    await typeInWidget(tab, 'pakete sortieren');
    await tab.locator('lantern-search').first().locator('a.hit').first().waitFor({ timeout: 30_000 });
    assert.equal((await resultPages(tab))[0], '/lager.html');
  } finally {
    await tab.close();
  }
});

test('--model quick: no model published or fetched, a paraphrase still gets quick meaning', { skip }, async () => {
  const site = join(home, 'quick-site');
  mkdirSync(site);
  const pages = {
    'index.html': ['Orchard guide', 'How to plant apple trees, prune them in winter and pick the fruit when it is ripe.'],
    'pruning.html': ['Pruning', 'Cut back dead branches in late winter, before the buds open. Remove shoots that cross the centre of the tree so light reaches every branch.'],
    'harvest.html': ['Harvest', 'Apples are ready when they come away from the branch with a gentle twist. Store them in a cool dark cellar.'],
    'pests.html': ['Pests', 'Codling moth larvae tunnel into the fruit. Hang pheromone traps in spring and collect fallen apples every week.'],
  };
  const write = (snippet) => {
    for (const [file, [title, body]] of Object.entries(pages)) {
      writeFileSync(join(site, file), `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${snippet}</head>`
        + `<body><main><h1>${title}</h1><p>${body}</p></main></body></html>`);
    }
  };
  write('');
  // Published with the model first: the quick build that follows takes it away again.
  run('npx', ['lantern', 'build', site, '--quiet'], owner);
  assert.ok(existsSync(join(site, 'lantern/model/manifest.json')));
  const log = run('npx', ['lantern', 'build', site, '--model', 'quick', '--quiet'], owner);
  const snippet = readFileSync(join(site, 'lantern/snippet.html'), 'utf8');
  assert.match(log, /model="none"/);
  assert.match(snippet, /model="none"/);
  const published = walk(join(site, 'lantern')).map((f) => f.slice(site.length + '/lantern/'.length));
  assert.ok(existsSync(join(site, 'lantern/search.lantern.query')), 'the query table is published');
  assert.deepEqual(published.filter((f) => /^model\/|embed_wasm|embed-worker/.test(f)), [], 'no model, no embedder');
  write(snippet);
  const server = await serveWith(join(owner, 'node_modules/.bin/lantern'), site, env);
  servers.push(server);
  const tab = await chrome.newPage();
  const requests = [];
  tab.on('request', (r) => requests.push(new URL(r.url()).pathname));
  try {
    await tab.goto(server.url + 'index.html');
    // No section holds every word: a question that needs meaning.
    await typeInWidget(tab, 'cutting branches in the cold season');
    const widget = tab.locator('lantern-search').first();
    await widget.locator('.mode-used').filter({ hasText: 'keyword + quick meaning results' }).waitFor({ timeout: 20_000 });
    await widget.locator('.status[data-stage=quick-only]').waitFor({ timeout: 10_000 });
    assert.equal((await resultPages(tab))[0], '/pruning.html');
    await tab.waitForTimeout(1_000);
    assert.ok(!requests.some((p) => /\/model\/|\.pack$|embed_wasm|embed-worker/.test(p)), `model requested: ${requests.join(' ')}`);
  } finally {
    await tab.close();
  }
});
