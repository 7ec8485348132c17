// A Sphinx site owner's path, as that owner: from the npm package alone (dist/package.sh), in an
// empty folder with no repository, a small Sphinx project of our own is built by the real
// sphinx-build, following site/docs/generators/sphinx.md exactly: its conf.py line, its
// _templates/layout.html and its two commands are read from that page, not copied here, so the
// page cannot drift from what works. A reader then types in Chromium.
// Needs LANTERN_DIST (the packages) and Sphinx from tests/html/build-sites.sh.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { audit, browser, ownerMachine, ownerProject, root, serveWith } from './harness.mjs';

const dist = process.env.LANTERN_DIST;
const sphinxBuild = join(root, 'tests/html/.venv/bin/sphinx-build');
const recipePage = join(root, 'site/docs/generators/sphinx.md');
const skip = !dist ? 'LANTERN_DIST is not set (bash dist/package.sh builds the packages)'
  : !existsSync(sphinxBuild) ? 'Sphinx is not installed (tests/html/build-sites.sh)' : false;

const machine = skip ? null : ownerMachine('lantern-sphinx-');
const { home, env, run } = machine ?? { home: '', env: {}, run: null };

/** The fenced blocks of a markdown page, by language. */
function blocks(markdown, lang) {
  return [...markdown.matchAll(/```(\w+)\n([\s\S]*?)```/g)].filter((m) => m[1] === lang).map((m) => m[2]);
}

// Our own small project: a guide, a settings page with an API entry, so Sphinx writes its
// generated index pages (genindex, py-modindex, search) and its "¶" permalinks.
const pages = {
  'index.rst': `Widgets
=======

Widgets draws small charts in a terminal.

.. toctree::

   install
   settings
   api
`,
  'install.rst': `Installing
==========

Get the package
---------------

Install widgets with pip into a virtual environment, then import it in your program.

Upgrading
---------

Upgrade in place; old chart files keep working after an upgrade.
`,
  'settings.rst': `Settings
========

Secret key
----------

The secret key signs the session cookie. Keep it out of version control and rotate it when a
maintainer leaves.

Colour themes
-------------

Charts follow the terminal's colours unless a theme is named.
`,
  'api.rst': `API
===

.. py:module:: widgets

.. py:function:: draw_chart(values, width=40)

   Draws the values as a bar chart of the given width and returns it as text.
`,
};

let project;
let chrome;
const servers = [];
const log = {};

before(async () => {
  if (skip) return;
  project = ownerProject(machine, dist, 'widgets');
  const recipe = readFileSync(recipePage, 'utf8');
  // conf.py: the project, then the line the page adds.
  mkdirSync(join(project, 'docs/_templates'), { recursive: true });
  writeFileSync(join(project, 'docs/conf.py'), 'project = "Widgets"\n');
  const [confLines] = blocks(recipe, 'python');
  appendFileSync(join(project, 'docs/conf.py'), confLines);
  const [layout] = blocks(recipe, 'html');
  log.layout = layout;
  writeFileSync(join(project, 'docs/_templates/layout.html'), layout);
  for (const [name, text] of Object.entries(pages)) writeFileSync(join(project, 'docs', name), text);
  // The page's commands, as written; `lantern` is the one npm installed.
  const [commands] = blocks(recipe, 'sh');
  log.commands = commands.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
  log.output = [];
  const deploy = () => {
    for (const line of log.commands) {
      const [cmd, ...args] = line.split(/\s+/);
      if (cmd === 'sphinx-build') log.output.push(run(sphinxBuild, [...args, '-q'], project));
      else if (cmd === 'lantern') log.output.push(run('npx', ['lantern', ...args, '--quiet'], project));
      else throw new Error(`generators/sphinx.md runs ${cmd}, which this test does not know`);
    }
  };
  deploy();
  log.firstPages = bundlePages();
  // The next deploy: sphinx-build leaves the output folder, and Lantern's own files, in place.
  deploy();
  chrome = await browser();
});
after(async () => {
  for (const s of servers) s.stop();
  await chrome?.close();
});

/** Every page of the published bundle, as `lantern query` reads it (keyword, any word). */
function bundlePages() {
  const bundle = join(project, '_build/html/lantern/search.lantern');
  const urls = new Set();
  for (const q of ['index', 'module', 'search', 'widgets', 'chart', 'key']) {
    const r = JSON.parse(run('npx', ['lantern', 'query', bundle, q, '--mode', 'keyword', '--json', '-k', '50'], project));
    for (const p of r.pages) urls.add(p.url);
  }
  return [...urls].sort();
}

test('Sphinx: the recipe of generators/sphinx.md, as written, publishes search into the built pages', { skip }, () => {
  assert.deepEqual(log.commands.map((c) => c.split(' ')[0]), ['sphinx-build', 'lantern']);
  // The tags the page tells owners to paste are the ones lantern prints.
  const printed = readFileSync(join(project, '_build/html/lantern/snippet.html'), 'utf8');
  const squash = (s) => s.replace(/\s+/g, ' ').trim();
  for (const tag of printed.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('<!--'))) {
    assert.ok(squash(log.layout).includes(squash(tag)), `generators/sphinx.md lacks the printed tag ${tag}`);
  }
  const html = readFileSync(join(project, '_build/html/settings.html'), 'utf8');
  assert.match(html, /<lantern-search bundle="\/lantern\/search\.lantern"/);
  // Sphinx's own index and search pages are not docs; Lantern's folder is never read back.
  const pagesNow = bundlePages();
  console.log(`# Sphinx pages indexed: ${pagesNow.join(', ')}`);
  for (const url of pagesNow) {
    assert.doesNotMatch(url, /genindex|py-modindex|search\.html|\/lantern\//, url);
  }
  assert.deepEqual(pagesNow, log.firstPages, 'the second deploy indexes the same pages');
  assert.ok(pagesNow.includes('/settings.html') && pagesNow.includes('/api.html'), pagesNow.join());
});

test('Sphinx: a reader types "secret key": the setting first, no "¶", no row twice, no axe finding', { skip }, async () => {
  const server = await serveWith(join(project, 'node_modules/.bin/lantern'), join(project, '_build/html'), env);
  servers.push(server);
  const page = await chrome.newPage();
  try {
    await page.goto(server.url + 'install.html');
    await page.keyboard.press('Control+k');
    const widget = page.locator('lantern-search').first();
    await widget.locator('input').waitFor();
    await page.keyboard.type('secret key', { delay: 120 });
    const hits = widget.locator('a.hit');
    let rows = [];
    for (let i = 0; i < 40; i += 1) {
      await page.waitForTimeout(250);
      rows = await hits.evaluateAll((as) => as.map((a) => ({ href: a.getAttribute('href'), text: a.textContent })));
      if (rows.length && new URL(rows[0].href, 'http://x').pathname === '/settings.html') break;
    }
    console.log(`# "secret key" typed: ${rows.slice(0, 3).map((r) => r.href).join(', ')}`);
    assert.equal(new URL(rows[0].href, 'http://x').pathname, '/settings.html', rows.map((r) => r.href).join());
    assert.match(rows[0].href, /#secret-key$/);
    for (const r of rows) assert.ok(!r.text.includes('¶'), `a permalink mark reached a result: ${r.text}`);
    const hrefs = rows.map((r) => r.href);
    assert.equal(new Set(hrefs).size, hrefs.length, `a row shown twice: ${hrefs.join()}`);
    // An API entry: its "¶" dropped too.
    const input = widget.locator('input');
    await input.fill('');
    await page.keyboard.type('draw_chart', { delay: 120 });
    let api = [];
    for (let i = 0; i < 40 && !api.some((r) => r.href.includes('api.html')); i += 1) {
      await page.waitForTimeout(250);
      api = await hits.evaluateAll((as) => as.map((a) => ({ href: a.getAttribute('href'), text: a.textContent })));
    }
    assert.ok(api.some((r) => r.href.includes('api.html')), api.map((r) => r.href).join());
    for (const r of api) assert.ok(!r.text.includes('¶'), `a permalink mark reached a result: ${r.text}`);
    const found = await audit(page, 'Sphinx page, results', 'lantern-search');
    assert.deepEqual(found.map((v) => `${v.impact} ${v.id}: ${v.nodes[0]}`), []);
  } finally {
    await page.close();
  }
});
