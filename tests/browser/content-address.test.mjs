// The service worker serves content-addressed files cache first by the rule lantern serve
// and the engine use (crates/engine/src/content_address.rs): the same table of cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import vm from 'node:vm';
import { root } from './harness.mjs';

test("the service worker's content-addressed rule agrees with the engine's cases", () => {
  const cases = JSON.parse(readFileSync(join(root, 'tests/content-addressed.json'), 'utf8'));
  // sw.js as a classic script in a context with a stub worker scope: its top-level function
  // declarations become the context's globals.
  const scope = { addEventListener() {}, location: { origin: 'http://x' } };
  const context = vm.createContext({ self: scope, caches: {}, URL, Response });
  vm.runInContext(readFileSync(join(root, 'web/widget/sw.js'), 'utf8'), context);
  assert.equal(typeof context.immutable, 'function');
  assert.ok(cases.yes.length >= 5 && cases.no.length >= 10);
  for (const p of cases.yes) assert.equal(context.immutable(p), true, p);
  for (const p of cases.no) assert.equal(context.immutable(p), false, p);
});

test('the service worker keeps a content-addressed response only when it is what its name says', async () => {
  const scope = { addEventListener() {}, location: { origin: 'http://x' }, crypto: globalThis.crypto };
  const context = vm.createContext({ self: scope, caches: {}, URL, Response });
  vm.runInContext(readFileSync(join(root, 'web/widget/sw.js'), 'utf8'), context);
  const wasm = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
  const hex = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', wasm)), (b) => b.toString(16).padStart(2, '0')).join('');
  const named = `/lantern/ui/lantern_ui_bg-${hex.slice(0, 12)}.wasm`;
  const bin = { 'content-type': 'application/wasm' };
  assert.equal(await context.keepable(named, new Response(wasm, { headers: bin })), true);
  // A captive portal's page, or any other bytes, under that name: served once, never kept.
  const portal = new Response('<html>Sign in to the Wi-Fi</html>', { headers: { 'content-type': 'text/html' } });
  assert.equal(await context.keepable(named, portal), false);
  assert.equal(await context.keepable(named, new Response(new Uint8Array([1, 2, 3]), { headers: bin })), false);
  // A shard is checked by the search core on arrival; here only that it is not a page.
  const shard = '/search.lantern.d/terms-0123456789abcdef-0.bin';
  assert.equal(await context.keepable(shard, new Response(new Uint8Array([1]), { headers: { 'content-type': 'application/octet-stream' } })), true);
  assert.equal(await context.keepable(shard, new Response('<html></html>', { headers: { 'content-type': 'text/html; charset=utf-8' } })), false);
});
