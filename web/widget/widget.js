// <lantern-search>: the one-tag search widget. Until the reader focuses it (or presses
// Ctrl/Cmd-K or "/"), nothing but this file is downloaded. Then it loads the Leptos UI and the
// runtime, mounts the UI in a shadow root (no styles leak in or out) and opens.
//
//   <script type="module" src="/lantern/widget.js"></script>
//   <lantern-search bundle="/search.lantern" model="/model/"></lantern-search>
//     (model: the folder whose manifest.json names the model files, as `lantern site` writes it)
//   <lantern-search page></lantern-search>          (a full search page, reads ?q=)
//   <lantern-search proxy="https://ask.example/"> (enables "Ask": cited answers via lantern proxy)

const here = new URL('.', import.meta.url);

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
      button.setAttribute('aria-label', 'Search the documentation');
      button.setAttribute('aria-haspopup', 'dialog');
      const mac = /Mac|iPhone|iPad/.test(navigator.platform);
      button.innerHTML = '<span class="icon" aria-hidden="true"></span><span>Search</span><kbd></kbd>';
      button.querySelector('kbd').textContent = mac ? '⌘K' : 'Ctrl K';
      button.addEventListener('click', () => this.open());
      button.addEventListener('focus', () => this.#boot(), { once: true });
      root.append(button);
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
      await ui.default({ module_or_path: new URL('ui/lantern_ui_bg.wasm', here).href });
      const bundle = new URL(this.getAttribute('bundle') || '../search.lantern', here).href;
      const model = new URL(this.getAttribute('model') || '../model/', here).href;
      const proxy = this.getAttribute('proxy') || null;
      const bridge = {
        proxy,
        ask: (rt, question, onDelta) => rt.ask(question, { proxy, onDelta }),
        loadBundle: (onProgress) => Lantern.load(bundle, { onProgress }),
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
document.addEventListener('keydown', (e) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName || '')
    || document.activeElement?.isContentEditable;
  const k = (e.key === 'k' || e.key === 'K') && (e.ctrlKey || e.metaKey);
  if (k || (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey)) {
    const w = document.querySelector('lantern-search');
    if (w) { e.preventDefault(); w.open(); }
  }
});

// Offline: a service worker at the site root caches pages, bundle, runtime and model.
if ('serviceWorker' in navigator && document.querySelector('meta[name="lantern-sw"]')) {
  const sw = document.querySelector('meta[name="lantern-sw"]').content;
  navigator.serviceWorker.register(sw).catch(() => {});
}
