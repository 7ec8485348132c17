// What a reader sees, checked by axe-core (the rules screen-reader and keyboard users rely on:
// roles and their children, names, contrast, no control inside another) in real Chromium, on
// the demo site's widget in every state a search goes through. Serious and critical findings
// fail; minor and moderate ones are printed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, browser, root, audit } from './harness.mjs';

let chrome;
let server;
before(async () => {
  chrome = await browser();
  server = await serve(root + '/out/web');
});
after(async () => {
  server?.stop();
  await chrome?.close();
});

const shadow = (page, sel) => page.locator('lantern-search').first().locator(sel);

test('closing the dialog gives focus back to what opened it', async () => {
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'index.html');
    const trigger = shadow(page, 'button.trigger').first();
    await trigger.focus();
    await page.keyboard.press('Enter');
    await shadow(page, 'input').waitFor();
    await page.keyboard.press('Escape');
    await shadow(page, '.overlay').waitFor({ state: 'hidden' });
    const focused = await page.evaluate(() => document.activeElement?.shadowRoot?.activeElement?.className ?? '');
    assert.equal(focused, 'trigger');
  } finally {
    await ctx.close();
  }
});

test('axe-core finds nothing serious in the closed, open, results and no-good-match states', async () => {
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    await page.goto(server.url + 'index.html');
    const found = {};
    found.closed = await audit(page, 'closed');
    await page.keyboard.press('/');
    const input = shadow(page, 'input');
    await input.waitFor();
    found.open = await audit(page, 'open');
    // Typed a key at a time, as a reader does, until results show.
    await input.pressSequentially('heading anchors slugs', { delay: 60 });
    await shadow(page, '[role=option]').first().waitFor({ timeout: 30_000 });
    found.typing = await audit(page, 'typing');
    await shadow(page, '.mode-used').filter({ hasText: /quick meaning|hybrid results/ }).waitFor({ timeout: 60_000 });
    found.results = await audit(page, 'results');
    // Screen readers hear the count from a live region that stays in place.
    const status = shadow(page, '.sr-only[role=status]');
    assert.match(await status.textContent(), /^\d+ results? (on \d+ pages)?/);
    // The first result is reached by arrows, and the input says which it is.
    await page.keyboard.press('ArrowDown');
    assert.equal(await input.getAttribute('aria-activedescendant'), 'lantern-opt-1');
    await page.keyboard.press('ArrowUp');
    assert.equal(await input.getAttribute('aria-activedescendant'), 'lantern-opt-0');
    assert.equal(await shadow(page, '#lantern-opt-0').getAttribute('aria-selected'), 'true');
    await input.fill('what is the weather in Lisbon tomorrow');
    await shadow(page, '.no-match').waitFor({ timeout: 60_000 });
    found.noGoodMatch = await audit(page, 'no good match');
    assert.match(await status.textContent(), /No good match/);
    for (const [state, violations] of Object.entries(found)) {
      assert.deepEqual(violations.map((v) => `${v.impact} ${v.id}: ${v.nodes[0]}`), [], `${state}: serious or critical findings`);
    }
  } finally {
    await ctx.close();
  }
});

test('the dialog speaks the page\'s language: a German page gets German labels and announcements', async () => {
  const ctx = await chrome.newContext();
  const page = await ctx.newPage();
  try {
    // The demo page as a German site would serve it: only <html lang> differs.
    await page.route('**/index.html', async (route) => {
      const r = await route.fetch();
      const body = (await r.text()).replace(/<html lang="[^"]*"/, '<html lang="de"');
      await route.fulfill({ response: r, body });
    });
    await page.goto(server.url + 'index.html');
    assert.equal(await shadow(page, 'button.trigger').first().getAttribute('aria-label'), 'Dokumentation durchsuchen');
    await page.keyboard.press('/');
    const input = shadow(page, 'input');
    await input.waitFor();
    assert.equal(await input.getAttribute('placeholder'), 'Dokumentation durchsuchen');
    assert.equal(await shadow(page, '[role=dialog]').getAttribute('aria-label'), 'Dokumentation durchsuchen');
    assert.equal(await shadow(page, '[role=radiogroup]').getAttribute('aria-label'), 'Suchart');
    await input.pressSequentially('heading anchors slugs', { delay: 60 });
    await shadow(page, '[role=option]').first().waitFor({ timeout: 30_000 });
    const status = shadow(page, '.sr-only[role=status]');
    for (let i = 0; i < 20 && !(await status.textContent()); i += 1) await page.waitForTimeout(100);
    assert.match(await status.textContent(), /^(1 Ergebnis\.|\d+ Ergebnisse auf \d+ Seiten\.)$/);
    const found = await audit(page, 'German page, results');
    assert.deepEqual(found.map((v) => `${v.impact} ${v.id}: ${v.nodes[0]}`), []);
    await input.fill('what is the weather in Lisbon tomorrow');
    await shadow(page, '.no-match').waitFor({ timeout: 60_000 });
    assert.match(await shadow(page, '.no-match').textContent(), /^Keine gute Übereinstimmung/);
  } finally {
    await ctx.close();
  }
});
