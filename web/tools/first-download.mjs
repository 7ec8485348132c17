// The code a reader downloads before the first result (the widget, its styles, the runtime
// and the UI module with the search core inside), compressed as hosts send it: printed on
// every site build, and an error when gzip's total passes the budget, so a dependency that
// adds weight to every reader's first search is seen the day it lands. Index data, the
// service worker and the model are not code of the first result and are counted by
// bench/typing.sh on the wire.
//
//   node web/tools/first-download.mjs out/web/lantern
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

// Bytes under gzip -9. 2026-12-06: 287 KB with Leptos, 201 KB without (the UI module 188 KB
// of it), 188 KB with lowercase from a table of runs and filters without B-trees. #54 asks
// for Pagefind UI's weight (116 KB of code); lower this as the module shrinks, never raise it
// in passing.
const GZIP_BUDGET = 190_000;

const dir = process.argv[2];
if (!dir) { console.error('usage: node first-download.mjs LANTERN_DIR'); process.exit(2); }
const uiWasm = readdirSync(join(dir, 'ui')).find((n) => /^lantern_ui_bg-[0-9a-f]+\.wasm$/.test(n));
if (!uiWasm) { console.error(`no UI module in ${dir}/ui`); process.exit(1); }
const files = ['widget.js', 'widget.css', 'lantern.js', 'fetch.js', 'embedder.js', 'ui/lantern_ui.js', `ui/${uiWasm}`];
let gz = 0;
let br = 0;
for (const f of files) {
  const raw = readFileSync(join(dir, f));
  const g = gzipSync(raw, { level: 9 }).length;
  const b = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  gz += g;
  br += b;
  console.log(`  ${f.padEnd(36)} ${String(raw.length).padStart(8)} raw ${String(g).padStart(8)} gzip ${String(b).padStart(8)} brotli`);
}
console.log(`first download (code): ${gz} bytes gzip (budget ${GZIP_BUDGET}), ${br} brotli`);
if (gz > GZIP_BUDGET) {
  console.error(`error: the first download grew past its budget by ${gz - GZIP_BUDGET} bytes (web/tools/first-download.mjs)`);
  process.exit(1);
}
