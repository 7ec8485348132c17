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
