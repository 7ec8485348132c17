// The answer panel in headless Chromium, through the real `lantern proxy`. No LLM is reachable
// here, so the proxy's upstream is a TEST DOUBLE: a small OpenAI-compatible server started
// below that replays scripted answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, cpSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, browser, root, lantern } from './harness.mjs';

const script = [];
const seen = [];
let double, proxy, site, chrome;

function startDouble() {
  return new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        seen.push(JSON.parse(body));
        const next = script.shift() ?? 'NOT_IN_PASSAGES';
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        if (typeof next === 'object') {
          // { broken: text }: one piece, then the connection drops mid-answer.
          res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: next.broken } }] })}\n\n`);
          setTimeout(() => res.destroy(), 100);
          return;
        }
        const text = next;
        for (let i = 0; i < text.length; i += 9) {
          res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: text.slice(i, i + 9) } }] })}\n\n`);
        }
        res.end('data: [DONE]\n\n');
      });
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function startProxy(upstream, origin) {
  return new Promise((resolve, reject) => {
    const child = spawn(lantern, ['proxy', '--upstream', upstream, '--model', 'test-double',
      '--addr', '127.0.0.1:0', '--allow-origin', origin], { stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, LANTERN_UPSTREAM_API_KEY: 'sk-never-in-the-browser' } });
    child.stdout.on('data', (d) => {
      const m = String(d).match(/at (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) resolve({ url: m[1], stop: () => child.kill('SIGINT') });
    });
    child.on('exit', (c) => reject(new Error(`proxy exited ${c}`)));
  });
}

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lantern-ask-'));
  cpSync(join(root, 'out/web'), dir, { recursive: true });
  site = await serve(dir);
  double = await startDouble();
  proxy = await startProxy(`http://127.0.0.1:${double.address().port}/v1`, site.url.replace(/\/$/, ''));
  const index = readFileSync(join(dir, 'index.html'), 'utf8');
  writeFileSync(join(dir, 'ask.html'), index.replace('<lantern-search></lantern-search>', `<lantern-search proxy="${proxy.url}"></lantern-search>`));
  chrome = await browser();
});

after(async () => {
  await chrome?.close();
  proxy?.stop();
  double?.close();
  site?.stop();
});

const w = (page, sel) => page.locator('lantern-search').first().locator(sel);

async function askFor(page, question) {
  await page.keyboard.press('/');
  await w(page, 'input').fill(question);
  // Results settle: with the model when the question needs meaning (it loads on intent), else
  // by keywords alone.
  await w(page, '.status[data-stage=hybrid], .status[data-stage=ready]').waitFor({ timeout: 60_000 });
  await w(page, '.mode-used').filter({ hasText: /^keyword results$|hybrid results/ }).waitFor({ timeout: 60_000 });
  await w(page, 'button.ask').click();
}

test('a cited answer streams in, with citations linked to the sections, as text', async () => {
  const page = await chrome.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(site.url + 'ask.html');
  script.push('Keep the cache file between CI runs with your CI cache feature [1]. It is not published <img src=x onerror="window.__xss=1">.\n\nOnly changed sections are embedded again [1][2].');
  await askFor(page, 'how do I keep the embedding cache between CI runs');
  await w(page, '.answer-text').waitFor({ timeout: 30_000 });
  const cites = w(page, '.answer-text a.cite');
  assert.equal(await cites.count(), 3);
  const passages = seen.at(-1).messages[1].content;
  assert.match(passages, /<<<PASSAGE 1 \| /, 'passages fenced as data');
  const href = await cites.first().getAttribute('href');
  assert.ok(href.startsWith('/') && href.includes('#'), href);
  assert.match(await w(page, '.answer-text').textContent(), /<img src=x onerror=/);
  assert.equal(await w(page, '.answer img').count(), 0);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  await w(page, '.answer button.why').click();
  assert.ok(await w(page, '.passages li').count() >= 2, 'passages used, on demand');
  const html = await page.content();
  assert.ok(!html.includes('sk-never-in-the-browser'), 'the key never reaches the page');
  await page.screenshot({ path: join(root, 'tests/browser/output/answer.png') });
  await page.close();
});

test('unverifiable citations: one retry, then the answer is withheld', async () => {
  const page = await chrome.newPage();
  await page.goto(site.url + 'ask.html');
  const before = seen.length;
  script.push('It uses magic [9].', 'Still magic [12].');
  await askFor(page, 'how are vectors made smaller for storage');
  await w(page, '.answer-status.abstained').waitFor({ timeout: 30_000 });
  assert.match(await w(page, '.answer').textContent(), /could not be verified/);
  assert.equal(seen.length - before, 2, 'exactly one corrective retry');
  assert.match(seen.at(-1).messages[1].content, /\[9\] does not refer to a passage/);
  await page.close();
});

test('a citation of several passages links each of them', async () => {
  const page = await chrome.newPage();
  await page.goto(site.url + 'ask.html');
  script.push('Both the cache and the manifest matter here [1, 2].');
  await askFor(page, 'how do I keep the embedding cache between CI runs');
  await w(page, '.answer-text').waitFor({ timeout: 30_000 });
  const cites = w(page, '.answer-text a.cite');
  assert.equal(await cites.count(), 2, 'one link per cited passage');
  assert.deepEqual(await cites.allTextContents(), ['[1]', '[2]']);
  const [a, b] = [await cites.nth(0).getAttribute('href'), await cites.nth(1).getAttribute('href')];
  assert.ok(a.includes('#') && b.includes('#'), `${a} ${b}`);
  await page.close();
});

test('a broken answer stream is reported, not shown as an answer', async () => {
  const page = await chrome.newPage();
  await page.goto(site.url + 'ask.html');
  const before = seen.length;
  script.push({ broken: 'Half an answer [1]' });
  await askFor(page, 'how do I keep the embedding cache between CI runs');
  const alert = w(page, '.answer-status[role=alert]');
  await alert.waitFor({ timeout: 30_000 });
  assert.match(await alert.textContent(), /answer stream failed \(upstream_stream\)/);
  assert.equal(await w(page, '.answer-text').count(), 0);
  assert.equal(seen.length - before, 1, 'no retry after a broken stream');
  await page.close();
});

test('no good match: no model is asked', async () => {
  const page = await chrome.newPage();
  await page.goto(site.url + 'ask.html');
  const before = seen.length;
  await askFor(page, 'what is the weather in Lisbon tomorrow');
  await w(page, '.answer-status.abstained').waitFor({ timeout: 30_000 });
  assert.match(await w(page, '.answer').textContent(), /couldn't find this in the docs/);
  assert.equal(seen.length, before);
  await page.close();
});

test('asking is off unless a proxy is configured', async () => {
  const page = await chrome.newPage();
  await page.goto(site.url + 'index.html');
  await page.keyboard.press('/');
  await w(page, 'input').fill('cache');
  await w(page, '[role=option]').first().waitFor();
  assert.equal(await w(page, 'button.ask').count(), 0);
  await page.close();
});
