// Types for Lantern's browser API (lantern.js).

/** A mode as `search` accepts it: `semantic` is `vector`. */
export type ModeOption = Mode | 'semantic';

export interface Progress { stage: 'bundle' | 'model'; loaded: number; total: number }

export interface BundleInfo {
  modelId: string;
  modelSha256: string;
  dim: number;
  pages: number;
  chunks: number;
  abstainCosine: number;
}

/** Pages must carry, for every key, one of its values. */
export type Filters = Record<string, string | string[]>;

// @generated-types

/**
 * The model in a worker, shared by the site's pages where the browser has shared workers
 * (`shared: false` for one of the page's own). `start` compiles the embedder and fetches the
 * model folder's manifest only; the model is fetched when a bundle accepts it
 * (`Lantern.loadSemantic`).
 */
export declare class Embedder {
  static start(options: { modelUrl: string; onProgress?: (p: Progress) => void; shared?: boolean }): Embedder;
  /** The bytes of the model folder's manifest.json. */
  readonly manifest: Promise<Uint8Array>;
  /** Whether the worker is the one the site's pages share. */
  readonly shared: boolean;
  /** Once ready: whether the model was found built (or being built) for another page. */
  readonly reused: boolean;
  /** Fetches the files a bundle accepted from the manifest and builds the model. */
  proceed(files: { packedFile: string }): Promise<void>;
  /** A text to be embedded once ready: its word rows are fetched while the model builds. */
  expect(text: string): void;
  embed(text: string): Promise<Float32Array>;
  terminate(): void;
}

export declare class Lantern {
  /**
   * Loads `bundleUrl`: the whole bundle (`site.lantern`), or its split form
   * (`site.lantern.d/meta.bin`), whose searches fetch only the shards they need. `core`: an
   * initialised wasm-bindgen module that exports `SearchIndex` (the widget passes its UI
   * module, which carries the search core); by default lantern.js loads its own.
   */
  static load(bundleUrl: string, options?: { onProgress?: (p: Progress) => void; prefetch?: number; core?: { SearchIndex: unknown } }): Promise<Lantern>;
  /**
   * Fetches every shard of a split bundle not loaded yet, if they add up to at most
   * `maxBytes`; resolves to how many were fetched.
   */
  prefetchAll(maxBytes?: number): Promise<number>;
  /**
   * Fetches `bundleUrl + '.query'`; resolves true once attached (hybrid searches before the
   * model then carry approximate meaning), false when the site has none or it is damaged.
   */
  loadQueryTable(): Promise<boolean>;
  readonly info: BundleInfo;
  readonly semanticReady: boolean;
  /**
   * `modelUrl`: the model folder; its manifest.json names the files and the model's contract.
   * `embedder`: one started earlier (`Embedder.start`), adopted instead of starting another.
   * `shared: false`: the model in a worker of this page's own, not the one the site's pages share.
   */
  loadSemantic(options: { modelUrl?: string; onProgress?: (p: Progress) => void; embedder?: Embedder; shared?: boolean }): Promise<void>;
  embed(text: string): Promise<Float32Array>;
  /** The site's filter keys and values (`data-lantern-filter`); empty when it defines none. */
  readonly facets: Facet[];
  /**
   * Throws on a filter key no page carries. For a search box: `latest` makes a newer `latest`
   * search supersede this one (it resolves to null and fetches nothing more); `wait` (ms)
   * delays fetching what the loaded shards lack; `onFirst` gets the first `first` results as
   * soon as their texts are loaded, when all `k` need more of a split bundle.
   */
  search(query: string, options?: { mode?: ModeOption; k?: number; filters?: Filters; latest?: false; wait?: number; first?: number; onFirst?: (results: Results) => void }): Promise<Results>;
  search(query: string, options: { mode?: ModeOption; k?: number; filters?: Filters; latest: true; wait?: number; first?: number; onFirst?: (results: Results) => void }): Promise<Results | null>;
  searchKeyword(query: string, options?: { k?: number; filters?: Filters }): Results;
  ask(question: string, options: { proxy: string; onDelta?: (textSoFar: string, attempt: number) => void }): Promise<AskOutcome>;
}
