// Minifies the JavaScript a reader downloads, in place, with terser (pinned in package.json):
// the widget, the runtime and wasm-bindgen's glue are 18.4 KB brotli as written and 10.5 KB
// minified, bytes every reader pays before the first result. ES modules (an `import` or
// `export` statement, or `import.meta`) keep their exports' names; a classic script (the
// service worker) keeps its top-level names. The sources in web/ stay the readable copy.
//   node minify.mjs FILE...
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { minify } from 'terser';

const files = process.argv.slice(2);
if (files.length === 0) { console.error('usage: node minify.mjs FILE...'); process.exit(2); }
for (const file of files) {
  const code = readFileSync(file, 'utf8');
  const module = /^\s*(import|export)\b|import\.meta/m.test(code);
  const out = await minify(code, { module, ecma: 2020, compress: { passes: 2 }, format: { comments: false } });
  writeFileSync(file, out.code);
  console.log(`  terser: ${basename(file)} ${code.length} -> ${out.code.length} bytes`);
}
