// The npm packages as a registry serves them: dist/package.sh's tarballs published to a real
// npm registry on loopback (Verdaccio, pinned in package.json), then `npm install
// lantern-docs-search` by name in an empty folder, as an owner types it. npm must fetch the
// launcher and only this machine's binary package (each platform's is an optional dependency
// with os and cpu set), and the launcher must say what is wrong when the binary is missing.
// Needs LANTERN_DIST (bash dist/package.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { npmTarballs, root } from './harness.mjs';

const dist = process.env.LANTERN_DIST;
const verdaccio = join(root, 'tests/browser/node_modules/.bin/verdaccio');
const skip = !dist ? 'LANTERN_DIST is not set (bash dist/package.sh builds the packages)'
  : !existsSync(verdaccio) ? 'Verdaccio is not installed (npm ci in tests/browser)' : false;

let registry;
let server;
let home;
let env;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const run = (args, cwd, extra = {}) => execFileSync('npm', args, {
  cwd, env: { ...env, ...extra }, encoding: 'utf8', maxBuffer: 64 << 20,
});

/** `npx lantern ...` in `cwd`: its exit code and both streams. */
function lantern(cwd, args, extra = {}) {
  try {
    const stdout = execFileSync('npx', ['lantern', ...args], {
      cwd, env: { ...env, ...extra }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { code: 0, stdout, stderr: '' };
  } catch (e) {
    return { code: e.status, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function project(name) {
  const dir = join(home, name);
  mkdirSync(dir);
  run(['init', '-y'], dir);
  return dir;
}

before(async () => {
  if (skip) return;
  home = mkdtempSync(join(tmpdir(), 'lantern-npm-'));
  const port = await freePort();
  registry = `http://127.0.0.1:${port}/`;
  writeFileSync(join(home, 'verdaccio.yaml'), [
    `storage: ${join(home, 'storage')}`,
    'uplinks: {}', // nothing is fetched from anywhere else
    'packages:',
    "  '**':",
    '    access: $all',
    '    publish: $all',
    'max_body_size: 200mb',
    'log: { type: stdout, format: pretty, level: warn }',
    '',
  ].join('\n'));
  server = spawn(verdaccio, ['--config', join(home, 'verdaccio.yaml'), '--listen', `127.0.0.1:${port}`],
    { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${registry}-/ping`)).ok) break;
    } catch { /* not up yet */ }
    if (i > 100) throw new Error('the registry did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    npm_config_cache: join(home, '.npm'),
    npm_config_registry: registry,
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  // The registry takes any token; npm will not publish without one.
  writeFileSync(join(home, '.npmrc'), `//127.0.0.1:${port}/:_authToken=loopback-test-registry\n`);
  for (const tarball of npmTarballs(dist).all) run(['publish', '--loglevel=error', tarball], home);
});
after(() => server?.kill());

test('npm install lantern-docs-search fetches the launcher and this machine\'s binary only', { skip }, () => {
  const dir = project('owner');
  run(['install', '--loglevel=error', 'lantern-docs-search'], dir);
  const installed = readdirSync(join(dir, 'node_modules')).filter((n) => !n.startsWith('.'));
  const own = `lantern-docs-search-${process.platform}-${process.arch}`;
  assert.deepEqual(installed.sort(), ['lantern-docs-search', own].sort());
  const out = lantern(dir, ['--version']);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /^lantern \d+\.\d+\.\d+/);
  const { launcher, binary, all } = npmTarballs(dist);
  // The launcher is a few KB; what an owner downloads is one binary package.
  assert.ok(statSync(launcher).size < 16 << 10, `${basename(launcher)}: ${statSync(launcher).size} bytes`);
  // With LANTERN_AARCH64=1 the registry also holds the arm64 package, which npm must skip.
  const others = all.filter((f) => f !== launcher && f !== binary);
  const size = (f) => `${basename(f)} ${(statSync(f).size / 1024).toFixed(1)} KiB`;
  console.log(`# npm: fetched ${size(launcher)} and ${size(binary)}; `
    + `skipped ${others.length ? others.map(size).join(', ') : 'none published'}`);
});

test('without its binary package the launcher says what to do, and LANTERN_BINARY overrides', { skip }, () => {
  const dir = project('omitted');
  run(['install', '--loglevel=error', '--omit=optional', 'lantern-docs-search'], dir);
  assert.deepEqual(readdirSync(join(dir, 'node_modules')).filter((n) => !n.startsWith('.')), ['lantern-docs-search']);
  const out = lantern(dir, ['--version']);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /lantern-docs-search-linux-x64.*is not installed/);
  assert.match(out.stderr, /--omit=optional/);
  const given = lantern(dir, ['--version'], { LANTERN_BINARY: join(dist, 'lantern') });
  assert.equal(given.code, 0, given.stderr);
  assert.match(given.stdout, /^lantern /);
});
