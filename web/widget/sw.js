// Lantern's service worker: search keeps working offline once a page has been visited.
// - Content-addressed files (`name-<12 hex>.ext`: the model as `lantern site` publishes it,
//   the wasm modules, a split bundle's shards) never change under their name: cache first,
//   kept across versions; when a newer file of the same name stem arrives, the older one is
//   deleted (not for shards, whose kind is their stem: many are current at once; the page
//   names the current ones, and the others are deleted; nor for a model's word rows, which
//   go with the model when a newer one replaces it).
// - Everything else (pages, bundle, manifests, the runtime's JavaScript): network first,
//   falling back to the cache, so a new build replaces the cached one on the next online visit.
// The build stamps VERSION with a hash of the runtime; a new runtime installs a new worker,
// which deletes the caches of older versions.
const VERSION = '__LANTERN_VERSION__';
const STATIC = `lantern-static-${VERSION}`;
const IMMUTABLE = 'lantern-immutable-v1';
// `stem-<hash>.ext`, or a shard's `kind-<hash>-<n>.bin` (n: its place in its group): the rule
// of crates/engine/src/content_address.rs (`lantern serve` marks the same names immutable),
// both checked against tests/content-addressed.json.
const HASHED = /^(.*)-[0-9a-f]{12,64}(-\d+)?(\.[a-z0-9]+)$/;
/** Whether `pathname` names a file by its content; never a page (a date is not a hash). */
function immutable(pathname) {
  return HASHED.test(pathname) && !/\.html?$/.test(pathname);
}
const SHARD = /\.d\/(terms|text|centroids|vectors)-[0-9a-f]{16}-\d+\.bin$/;
// A packed model's word rows, `rows-<hash>.bin` beside its `model-<hash>.pack`.
const ROWS = /\/rows-[0-9a-f]{12}\.bin$/;

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil((async () => {
  for (const name of await caches.keys()) {
    if (name.startsWith('lantern-') && name !== STATIC && name !== IMMUTABLE) await caches.delete(name);
  }
  await self.clients.claim();
})()));

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin) return;
  event.respondWith(immutable(url.pathname) ? cacheFirst(req, url) : networkFirst(req));
});

// The page names the shards its split bundle has now (web/runtime/lantern.js); the others
// cached under that bundle's folder belong to earlier builds.
self.addEventListener('message', (event) => {
  const { lantern, base, keep } = event.data || {};
  if (lantern !== 'shards' || typeof base !== 'string' || !Array.isArray(keep)) return;
  event.waitUntil(forgetShards(base, new Set(keep)));
});

async function forgetShards(base, keep) {
  let folder;
  try {
    folder = new URL(base);
  } catch {
    return;
  }
  if (folder.origin !== self.location.origin || !folder.pathname.endsWith('.d/')) return;
  const cache = await caches.open(IMMUTABLE);
  for (const req of await cache.keys()) {
    const p = new URL(req.url).pathname;
    if (p.startsWith(folder.pathname) && SHARD.test(p) && !keep.has(p.slice(folder.pathname.length))) {
      await cache.delete(req);
    }
  }
}

/**
 * Whether a response may be kept under its content-addressed name: a name made of a sha256
 * (`stem-<hex>.ext`) must be the bytes' sha256; a shard (named by its group's xxh3, which the
 * search core checks on arrival) at least must not be a web page.
 */
async function keepable(pathname, res) {
  if (/^text\/html/i.test(res.headers.get('content-type') ?? '')) return false;
  if (SHARD.test(pathname)) return true;
  const m = pathname.match(/-([0-9a-f]{12,64})\.[a-z0-9]+$/);
  if (!m || !self.crypto?.subtle) return Boolean(m);
  const digest = new Uint8Array(await self.crypto.subtle.digest('SHA-256', await res.arrayBuffer()));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  return hex.startsWith(m[1]);
}

async function cacheFirst(req, url) {
  const cache = await caches.open(IMMUTABLE);
  const hit = await cache.match(req);
  if (hit) return hit;
  const res = await fetch(req);
  if (res.ok) {
    // Kept for ever, so kept only when it is what its name says (a captive portal's page
    // served under a module's name would otherwise break search for good).
    const copy = res.clone();
    if (!(await keepable(url.pathname, copy.clone()))) return res;
    await cache.put(req, copy);
    // Drop older versions of the same file (same path up to the hash and extension).
    const [, stem, , ext] = url.pathname.match(HASHED);
    if (!SHARD.test(url.pathname) && !ROWS.test(url.pathname)) {
      let replaced = false;
      for (const old of await cache.keys()) {
        const p = new URL(old.url).pathname;
        const m = p.match(HASHED);
        if (p !== url.pathname && m && m[1] === stem && m[3] === ext) {
          await cache.delete(old);
          replaced = true;
        }
      }
      // A new model: the old one's word rows go too (the new one fetches its own).
      if (replaced && ext === '.pack') {
        const folder = url.pathname.slice(0, url.pathname.lastIndexOf('/') + 1);
        for (const old of await cache.keys()) {
          const p = new URL(old.url).pathname;
          if (p.startsWith(folder) && ROWS.test(p) && !p.slice(folder.length).includes('/')) await cache.delete(old);
        }
      }
    }
    // A wasm module is answered from the cache, once stored: Chromium keeps a module's
    // compiled code only with a cached response, so the next visit can start from it. (Not
    // the model: its download reports progress as it streams.)
    if (ext === '.wasm') {
      const stored = await cache.match(req);
      if (stored) {
        res.body?.cancel();
        return stored;
      }
    }
  }
  return res;
}

async function networkFirst(req) {
  const cache = await caches.open(STATIC);
  try {
    const res = await fetch(req);
    // A result link's ?highlight= names words, not another page: one cached copy per page.
    const key = new URL(req.url);
    key.searchParams.delete('highlight');
    if (res.ok) await cache.put(key.href === req.url ? req : key.href, res.clone());
    return res;
  } catch (err) {
    const hit = await cache.match(req, { ignoreSearch: req.mode === 'navigate' });
    if (hit) return hit;
    throw err;
  }
}
