// <lantern-search>: the one-tag search widget. Until the reader focuses it (or presses
// Ctrl/Cmd-K or "/"), nothing but this file is downloaded. Then it loads the UI module and the
// runtime, mounts the UI in a shadow root (no styles leak in or out) and opens.
//
//   <script type="module" src="/lantern/widget.js"></script>
//   <lantern-search bundle="/search.lantern" model="/model/"></lantern-search>
//     (model: the folder whose manifest.json names the model files, as `lantern site` writes it)
//   <lantern-search page></lantern-search>          (a full search page, reads ?q=)
//   <lantern-search proxy="https://ask.example/"> (enables "Ask": cited answers via lantern proxy)
//   <lantern-search keys="ctrl-k">   (the shortcuts that open it: "ctrl-k /" by default; "/"
//                                     always gives way to a page that handles it itself)

const here = new URL('.', import.meta.url);
// A split bundle up to this size is fetched whole once the reader has paused and the browser
// is idle, so search keeps working offline; a larger one keeps only the shards its searches
// used.
const PREFETCH_BYTES = 8 * 1024 * 1024;

/** The trigger button's label and word, by the page's language. */
const TRIGGER = {
  en: ['Search the documentation', 'Search'],
  de: ['Dokumentation durchsuchen', 'Suchen'],
  fr: ['Rechercher dans la documentation', 'Rechercher'],
  es: ['Buscar en la documentación', 'Buscar'],
  ja: ['ドキュメントを検索', '検索'],
  zh: ['搜索文档', '搜索'],
};

class LanternSearch extends HTMLElement {
  #ui = null;
  #booting = null;

  connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: 'open' });
    const css = document.createElement('link');
    css.rel = 'stylesheet';
    css.href = new URL('widget.css', here).href;
    root.append(css);
    if (!this.hasAttribute('page')) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'trigger';
      // The dialog's own labels follow the page's language (web/ui/src/labels.rs); so does this.
      const lang = (document.documentElement.lang || '').toLowerCase().split(/[-_]/)[0];
      const [label, word] = TRIGGER[lang] ?? TRIGGER.en;
      button.setAttribute('aria-label', label);
      button.setAttribute('aria-haspopup', 'dialog');
      const mac = /Mac|iPhone|iPad/.test(navigator.platform);
      button.innerHTML = '<span class="icon" aria-hidden="true"></span><span></span><kbd></kbd>';
      button.querySelector('span:not(.icon)').textContent = word;
      button.querySelector('kbd').textContent = mac ? '⌘K' : 'Ctrl K';
      button.addEventListener('click', () => this.open());
      button.addEventListener('focus', () => this.#boot(), { once: true });
      root.append(button);
    }
    // A good guest: keys typed in the dialog are Lantern's. Out of a shadow root the page sees
    // them as pressed on <lantern-search>, not in an input, so a theme's own shortcuts (n, p,
    // s, arrows, "/") would act on them; they stop here (not those on the closed trigger).
    for (const type of ['keydown', 'keypress', 'keyup']) {
      this.addEventListener(type, (e) => {
        const from = e.composedPath()[0];
        if (from !== this && !from.classList?.contains('trigger')) e.stopPropagation();
      });
    }
    const mount = document.createElement('div');
    root.append(mount);
    this.mountPoint = mount;
    if (this.hasAttribute('page')) this.open();
  }

  /** Opens the dialog, loading the UI first if needed. */
  async open() {
    const ui = await this.#boot();
    ui.open();
  }

  #boot() {
    if (this.#ui) return Promise.resolve(this.#ui);
    if (this.#booting) return this.#booting;
    this.#booting = (async () => {
      const [{ Lantern }, ui] = await Promise.all([
        import(new URL('lantern.js', here).href),
        import(new URL('ui/lantern_ui.js', here).href),
      ]);
      // The module finds its wasm beside itself (by content-addressed name).
      await ui.default();
      const bundle = new URL(this.getAttribute('bundle') || '../search.lantern', here).href;
      // model="none": the site publishes quick meaning only (`lantern build --model quick`).
      const hasModel = this.getAttribute('model') !== 'none';
      const model = hasModel ? new URL(this.getAttribute('model') || '../model/', here).href : null;
      const proxy = this.getAttribute('proxy') || null;
      const bridge = {
        proxy,
        // Readers who ask to save data get keyword search and the small query table, never
        // the model download.
        saveData: navigator.connection?.saveData === true,
        hasModel,
        ask: (rt, question, onDelta) => rt.ask(question, { proxy, onDelta }),
        // The split form (all `lantern build` publishes): the first results fetch only the
        // shards they need; the rest of a bundle up to PREFETCH_BYTES follows, for offline use.
        // A whole file is read where there is no split form; the split form's error is the one
        // told when neither loads.
        // Readers who save data keep only the shards their searches use.
        // The UI module carries the search core: one download, not two.
        loadBundle: (onProgress) => Lantern.load(`${bundle}.d/meta.bin`, { onProgress, prefetch: bridge.saveData ? 0 : PREFETCH_BYTES, core: ui })
          .catch((e) => Lantern.load(bundle, { onProgress, core: ui }).catch(() => { throw e; })),
        // The model is fetched on intent (a question that needs meaning), or at once when the
        // service worker already holds it (content-addressed under the model folder).
        modelCached: async () => {
          try {
            const base = new URL(model).pathname;
            const keys = await (await caches.open('lantern-immutable-v1')).keys();
            return keys.some((r) => { const p = new URL(r.url).pathname; return p.startsWith(base) && p.endsWith('.pack'); });
          } catch { return false; }
        },
        loadSemantic: (rt, onProgress) => rt.loadSemantic({
          modelUrl: model,
          onProgress: (p) => { if (p.stage === 'model') onProgress(p); },
        }),
      };
      const q = new URLSearchParams(location.search).get('q') || '';
      this.#ui = ui.mount(this.mountPoint, bridge, this.hasAttribute('page'), q);
      return this.#ui;
    })();
    return this.#booting;
  }
}

customElements.define('lantern-search', LanternSearch);

// Ctrl/Cmd-K and "/" open the first widget on the page, as readers know from hosted docs search.
// Listened for on the window, after the page's own handlers: "/" gives way to a page that
// handled it (a theme's search or help), and never fires while something editable has focus.
function editable(el) {
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  return !!el && (/^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) || el.isContentEditable);
}
window.addEventListener('keydown', (e) => {
  const w = document.querySelector('lantern-search:not([page])') || document.querySelector('lantern-search');
  if (!w || e.altKey) return;
  const keys = (w.getAttribute('keys') ?? 'ctrl-k /').toLowerCase().split(/\s+/);
  const ctrlK = (e.key === 'k' || e.key === 'K') && (e.ctrlKey || e.metaKey) && !e.shiftKey;
  const slash = e.key === '/' && !e.ctrlKey && !e.metaKey && !e.defaultPrevented
    && !editable(document.activeElement);
  if ((ctrlK && keys.includes('ctrl-k')) || (slash && keys.includes('/'))) {
    e.preventDefault();
    w.open();
  }
});

// Offline: a service worker at the site root caches pages, bundle, runtime and model.
if ('serviceWorker' in navigator && document.querySelector('meta[name="lantern-sw"]')) {
  const sw = document.querySelector('meta[name="lantern-sw"]').content;
  navigator.serviceWorker.register(sw).catch(() => {});
}

// Highlights on the destination page: a result link carries the words it matched
// (`?highlight=word word`, as mdBook's search does). Which words is decided once, where the
// link is made (web/ui/src/state.rs, `highlight_url`); here they are only bounded (the URL may
// be anyone's), escaped and marked in the page's content as text nodes wrapped in <mark>
// (never markup from the URL), and the section in the link's fragment, else the first mark,
// is scrolled into view.
const MAX_MARKS = 300;
const MAX_WORDS = 8; // state.rs MAX_HIGHLIGHT_WORDS
function highlightFromUrl() {
  const raw = new URLSearchParams(location.search).get('highlight');
  if (!raw) return;
  const words = raw.split(/\s+/).filter((w) => w && w.length <= 64).slice(0, MAX_WORDS);
  if (!words.length) return;
  const esc = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // Longer words also match their inflections (export -> exporting); short ones only whole.
  const alts = words.map((w) => (w.length >= 4 ? `${esc(w)}[\\p{L}\\p{N}]*` : esc(w)));
  const re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${alts.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
  const root = document.querySelector('[data-lantern-body], main, article, [role=main]') || document.body;
  if (!root) return;
  const skip = /^(SCRIPT|STYLE|TEXTAREA|NOSCRIPT|MARK|NAV|HEADER|FOOTER|ASIDE|LANTERN-SEARCH)$/;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      for (let el = node.parentElement; el && el !== root.parentElement; el = el.parentElement) {
        if (skip.test(el.tagName) || el.hasAttribute('data-lantern-ignore')) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  let marks = 0;
  let first = null;
  for (const node of nodes) {
    if (marks >= MAX_MARKS) break;
    const text = node.nodeValue;
    re.lastIndex = 0;
    let m;
    let at = 0;
    const frag = document.createDocumentFragment();
    while ((m = re.exec(text)) && marks < MAX_MARKS) {
      frag.append(document.createTextNode(text.slice(at, m.index)));
      const mark = document.createElement('mark');
      mark.className = 'lantern-highlight';
      mark.textContent = m[0];
      frag.append(mark);
      first ??= mark;
      marks += 1;
      at = m.index + m[0].length;
    }
    if (at === 0) continue;
    frag.append(document.createTextNode(text.slice(at)));
    node.replaceWith(frag);
  }
  document.documentElement.dataset.lanternHighlights = String(marks);
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  (target || first)?.scrollIntoView({ block: 'start' });
}
if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', highlightFromUrl, { once: true });
} else {
  highlightFromUrl();
}
