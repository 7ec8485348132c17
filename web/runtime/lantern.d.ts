// Types for Lantern's browser API (lantern.js).

export type Mode = 'hybrid' | 'vector' | 'semantic' | 'keyword';

export interface Progress { stage: 'bundle' | 'model'; loaded: number; total: number }

export interface BundleInfo {
  modelId: string;
  modelSha256: string;
  dim: number;
  pages: number;
  chunks: number;
  abstainCosine: number;
}

/** One retriever's view of a hit: 1-based rank and its own score. */
export interface Signal { rank: number; score: number }

export interface Hit {
  chunk: number;
  page: number;
  title: string;
  breadcrumb: string;
  /** Page URL with the section anchor. */
  url: string;
  /** Fused score in hybrid mode (a convex combination of keyword and cosine evidence), the retriever's own score otherwise. */
  score: number;
  keyword: Signal | null;
  vector: Signal | null;
  /** Plain text: escape before display. */
  excerpt: string;
  /** [start, end) UTF-16 offsets of matched words in `excerpt`. */
  highlights: [number, number][];
}

export interface PageGroup {
  page: number;
  title: string;
  url: string;
  /** The page's `data-lantern-meta` pairs, [key, value]. Plain text: escape before display. */
  meta: [string, string][];
  /** The page's best sections, at most three; its top first when the query names the page. */
  hits: Hit[];
  /** How many more of the page's sections matched ("N more on this page"). */
  more: number;
}

/** One filter key of the site with each value and how many pages carry it. */
export interface Facet { key: string; values: [string, number][] }

/** Pages must carry, for every key, one of its values. */
export type Filters = Record<string, string | string[]>;

export interface Results {
  mode: 'hybrid' | 'vector' | 'keyword';
  hits: Hit[];
  pages: PageGroup[];
  noGoodMatch: boolean;
  bestCosine: number | null;
  /** The query was embedded by the bundle's query table, not the model: approximate meaning. */
  approximate: boolean;
  /**
   * The query is written mostly in a script the model does not read (its manifest's
   * `scripts`, e.g. a Chinese question to an English model): `noGoodMatch` then rests on
   * the keyword evidence alone.
   */
  unreadScript: boolean;
  /**
   * Shards of a split bundle the query needs that are not loaded yet (only from
   * `searchKeyword`; `search` fetches them and searches again).
   */
  missing?: string[];
}

export interface Passage { n: number; chunk: number; url: string; breadcrumb: string; text: string }

export type AskOutcome =
  | { status: 'answered'; text: string; cited: number[]; passages: Passage[] }
  | { status: 'abstained'; reason: 'no_good_match' | 'not_in_context' | 'unverifiable_citations'; passages: Passage[]; modelCalls: number };

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
   * (`site.lantern.d/meta.bin`), whose searches fetch only the shards they need.
   */
  static load(bundleUrl: string, options?: { onProgress?: (p: Progress) => void; prefetch?: number }): Promise<Lantern>;
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
   * delays fetching what the loaded shards lack.
   */
  search(query: string, options?: { mode?: Mode; k?: number; filters?: Filters; latest?: false; wait?: number }): Promise<Results>;
  search(query: string, options: { mode?: Mode; k?: number; filters?: Filters; latest: true; wait?: number }): Promise<Results | null>;
  searchKeyword(query: string, options?: { k?: number; filters?: Filters }): Results;
  ask(question: string, options: { proxy: string; onDelta?: (textSoFar: string, attempt: number) => void }): Promise<AskOutcome>;
}
