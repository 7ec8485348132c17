// Shared setup for the browser tests: a web root with the runtime, the model and a bundle,
// served by `lantern serve` on loopback, and Debian's Chromium driven by playwright-core.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, cpSync, mkdirSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import http from 'node:http';
import { createRequire } from 'node:module';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const lantern = join(root, 'target/release/lantern');

/** Runs the native CLI and returns stdout. */
export function cli(...args) {
  return execFileSync(lantern, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
}

/**
 * A site owner's machine: system tools only (no ~/.cargo/bin, no checkout, no model folder), a
 * fresh home and an offline npm. `run(cmd, args, cwd)` runs a command there and returns stdout.
 */
export function ownerMachine(prefix) {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    XDG_CACHE_HOME: join(home, '.cache'),
    npm_config_cache: join(home, '.npm'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { home, env, run };
}

/** The npm tarballs in `dist`: the launcher, and this machine's binary package. */
export function npmTarballs(dist) {
  const files = readdirSync(dist).filter((f) => f.endsWith('.tgz'));
  const launcher = files.find((f) => /^lantern-docs-search-\d/.test(f));
  const binary = files.find((f) => f.startsWith(`lantern-docs-search-${process.platform}-${process.arch}-`));
  if (!launcher || !binary) throw new Error(`${dist}: no npm launcher or ${process.platform}-${process.arch} binary package`);
  return { launcher: join(dist, launcher), binary: join(dist, binary), all: files.map((f) => join(dist, f)) };
}

/** A new folder `name` in the owner's home with the npm package from `dist` installed in it
 * (offline, so from its tarballs: the launcher and the binary package a registry would add). */
export function ownerProject({ home, run }, dist, name) {
  const dir = join(home, name);
  mkdirSync(dir);
  run('npm', ['init', '-y'], dir);
  const { launcher, binary } = npmTarballs(dist);
  run('npm', ['install', '--no-audit', '--no-fund', launcher, binary], dir);
  return dir;
}

/** Builds a web root: runtime, model, the demo bundle, a test page; returns its path. */
export function webRoot() {
  const dir = mkdtempSync(join(tmpdir(), 'lantern-web-'));
  cpSync(join(root, 'out/web/lantern'), join(dir, 'lantern'), { recursive: true });
  mkdirSync(join(dir, 'model'));
  for (const f of ['model.onnx', 'model.pack', 'tokenizer.json', 'manifest.json']) {
    cpSync(join(root, 'models/minilm', f), join(dir, 'model', f));
  }
  // A manifest naming another model: the runtime must refuse it before downloading anything.
  mkdirSync(join(dir, 'model-other'));
  const manifest = JSON.parse(readFileSync(join(root, 'models/minilm/manifest.json'), 'utf8'));
  writeFileSync(join(dir, 'model-other', 'manifest.json'), JSON.stringify({
    ...manifest, sha256: 'f'.repeat(64), files: { model: 'absent.onnx', tokenizer: 'absent.json' },
  }));
  // The bundle's model with a packed file outside its folder, and with none: refused too.
  for (const [name, packed] of [['model-escape', { ...manifest.packed, file: '../model/model.pack' }], ['model-unpacked', undefined]]) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'manifest.json'), JSON.stringify({ ...manifest, packed }));
  }
  // The same model folder with one byte of the packed model flipped: refused by its sha256.
  mkdirSync(join(dir, 'model-damaged'));
  for (const f of ['model.onnx', 'tokenizer.json', 'manifest.json']) {
    cpSync(join(root, 'models/minilm', f), join(dir, 'model-damaged', f));
  }
  const pack = readFileSync(join(root, 'models/minilm/model.pack'));
  pack[pack.length >> 1] ^= 0xff;
  writeFileSync(join(dir, 'model-damaged', 'model.pack'), pack);
  // The purpose-made corpus for keyword analysis (identifiers, prefixes, accents, C++).
  cli('build', 'tests/corpus/analysis', '--out', join(dir, 'analysis.lantern'), '--quiet');
  const bundle = readFileSync(join(root, 'out/site.lantern'));
  writeFileSync(join(dir, 'site.lantern'), bundle);
  // Its split form: the meta file and the shards.
  cpSync(join(root, 'out/site.lantern.d'), join(dir, 'site.lantern.d'), { recursive: true });
  // The query table beside it; copies of the bundle without one, and with a damaged one.
  const table = readFileSync(join(root, 'out/site.lantern.query'));
  writeFileSync(join(dir, 'site.lantern.query'), table);
  writeFileSync(join(dir, 'notable.lantern'), bundle);
  writeFileSync(join(dir, 'damaged.lantern'), bundle);
  writeFileSync(join(dir, 'damaged.lantern.query'), table.subarray(0, table.length - 100));
  writeFileSync(join(dir, 'truncated.lantern'), bundle.subarray(0, bundle.length >> 1));
  writeFileSync(join(dir, 'test.html'), `<!doctype html><meta charset="utf-8"><title>runtime test</title>
<script type="module">
import { Lantern } from './lantern/lantern.js';
window.Lantern = Lantern;
window.libReady = true;
</script>`);
  return dir;
}

/**
 * Times a search widget's moments in the page's own clock, for benchmarks: the moment search is
 * opened (the first "/" or Ctrl/Cmd-K) and the moment each `.mode-used` text first shows (in
 * the widget's shadow root). A locator's `waitFor` only says that it has happened: Playwright
 * polls at up to 500 ms intervals, which would be counted as the reader's wait.
 * Call before `page.goto`; read with `shownAfterOpen(page, pattern)`.
 */
export async function stopwatch(page) {
  await page.addInitScript(() => {
    const marks = (window.__lanternMarks = { open: null, shown: [] });
    addEventListener('keydown', (e) => {
      if (marks.open === null && (e.key === '/' || ((e.key === 'k' || e.key === 'K') && (e.ctrlKey || e.metaKey)))) {
        marks.open = performance.now();
      }
    }, true);
    const seen = new Set();
    const look = (root) => {
      for (const el of root.querySelectorAll('.mode-used')) {
        const text = el.textContent.trim();
        if (!seen.has(text)) { seen.add(text); marks.shown.push({ text, at: performance.now() }); }
      }
    };
    const attach = Element.prototype.attachShadow;
    Element.prototype.attachShadow = function (init) {
      const shadow = attach.call(this, init);
      new MutationObserver(() => look(shadow)).observe(shadow, { subtree: true, childList: true, characterData: true });
      return shadow;
    };
  });
}

/** Ms from opening search to the first `.mode-used` text matching `pattern` (see `stopwatch`). */
export async function shownAfterOpen(page, pattern) {
  const { open, shown } = await page.evaluate(() => window.__lanternMarks);
  const hit = shown.find((s) => pattern.test(s.text));
  if (open === null || !hit) throw new Error(`stopwatch: no "${pattern}" after opening search`);
  return Math.round(hit.at - open);
}

/**
 * Starts `lantern serve` on a free loopback port; resolves to { url, stop }. `watched`: behind
 * a pass-through proxy that sees every request, whoever makes it (the page, its workers, the
 * site's shared worker, the service worker): then also `requests` (their paths, in order) and
 * `bytes()` (what was sent, compressed as sent).
 */
export async function serve(dir, { watched = false } = {}) {
  const origin = await lanternServe(dir);
  if (!watched) return origin;
  const requests = [];
  let sent = 0;
  const proxy = http.createServer((req, res) => {
    requests.push(new URL(req.url, origin.url).pathname);
    const up = http.request(new URL(req.url, origin.url), { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.on('data', (d) => { sent += d.length; });
      r.pipe(res);
    });
    // The server stopped (offline tests): the browser sees a failed request.
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${proxy.address().port}/`,
    requests,
    bytes: () => sent,
    stop: () => { proxy.close(); proxy.closeAllConnections(); origin.stop(); },
  };
}

function lanternServe(dir) {
  return serveWith(lantern, dir);
}

/**
 * `BIN serve DIR` on a free loopback port (BIN: the checkout's lantern, or a package's launcher,
 * which passes the stop signal on), with `env` if given; resolves to its URL and a stop function.
 */
export function serveWith(bin, dir, env = process.env) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(bin, ['serve', dir, '--addr', '127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/at (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) resolvePromise({ url: m[1], stop: () => child.kill('SIGINT') });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`lantern serve exited with ${code}`)));
  });
}

export async function browser() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/**
 * axe-core on the page, shadow roots included (or only within `include`, a CSS selector):
 * the serious and critical findings; every finding is printed, labelled `state`.
 */
export async function audit(page, state, include) {
  const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ path: axePath });
  const violations = await page.evaluate(async (include) =>
    (await window.axe.run(include ? { include: [include] } : document, { resultTypes: ['violations'] })).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.slice(0, 3).map((n) => `${JSON.stringify(n.target)}: ${n.failureSummary.replace(/\s+/g, ' ')}`),
    })), include ?? null);
  for (const v of violations) console.log(`${state}: ${v.impact} ${v.id}\n  ${v.nodes.join('\n  ')}`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
