#!/usr/bin/env node
// Runs the `lantern` binary this package carries, with the arguments and streams as given.
'use strict';
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`lantern: this package carries a Linux x86-64 binary; this machine is ${process.platform}-${process.arch}`);
  process.exit(1);
}
const bin = join(__dirname, '..', 'vendor', 'lantern-linux-x64');
const r = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' });
if (r.error) {
  console.error(`lantern: could not run ${bin}: ${r.error.message}`);
  process.exit(1);
}
process.exit(r.status ?? 1);
