// Writes NAME.br (brotli, best quality) and NAME.gz (gzip -9) beside every compressible file of
// a built site, for `lantern serve` and static hosts that serve precompressed files. The model
// (.onnx) is left alone: its int8 weights shrink by under 1% and brotli takes most of a minute
// on it; the packed model (.pack) shrinks by about 10% and is compressed. A file that does not shrink by 5% gets no copy. Node's zlib: no extra tool to install.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const COMPRESSIBLE = /\.(wasm|js|mjs|css|html|json|svg|lantern|query|bin|txt|xml|map|pack)$/;
const dir = process.argv[2];
if (!dir) { console.error('usage: node precompress.mjs DIR'); process.exit(2); }
let files = 0;
let saved = 0;
// Copies from an earlier build go first: they are made again, or dropped with their file.
function clean(d) {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) clean(p);
    else if (/\.(br|gz)$/.test(name) && COMPRESSIBLE.test(name.slice(0, -3))) rmSync(p);
  }
}
function walk(d) {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    const st = statSync(p);
    if (st.isDirectory()) { walk(p); continue; }
    if (!COMPRESSIBLE.test(name) || st.size < 512) continue;
    const raw = readFileSync(p);
    const br = brotliCompressSync(raw, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
    });
    const gz = gzipSync(raw, { level: 9 });
    for (const [ext, bytes] of [['br', br], ['gz', gz]]) {
      if (bytes.length <= raw.length * 0.95) {
        writeFileSync(`${p}.${ext}`, bytes);
        files += 1;
        if (ext === 'br') saved += raw.length - bytes.length;
      }
    }
  }
}
clean(dir);
walk(dir);
console.log(`precompressed: ${files} files written, brotli saves ${(saved / 1048576).toFixed(1)} MiB`);
