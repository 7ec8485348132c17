#!/usr/bin/env node
// Runs the `lantern` binary this package carries, with the arguments and streams as given;
// signals sent to this launcher (a process manager's SIGTERM, Ctrl-C) are passed on to it.
'use strict';
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const { join } = require('node:path');

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(`lantern: this package carries a Linux x86-64 binary; this machine is ${process.platform}-${process.arch}`);
  process.exit(1);
}
const bin = join(__dirname, '..', 'vendor', 'lantern-linux-x64');
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (e) => {
  console.error(`lantern: could not run ${bin}: ${e.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 1) : code ?? 1);
});
