#!/usr/bin/env node
// Runs the `lantern` binary for this machine, which npm installed from the optional package
// named for its platform (lantern-docs-search-linux-x64, -linux-arm64), with the arguments and
// streams as given; signals sent to this launcher (a process manager's SIGTERM, Ctrl-C) are
// passed on to it. LANTERN_BINARY names another binary to run instead.
'use strict';
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const { dirname, join } = require('node:path');

// Platforms a binary is built for: `${process.platform}-${process.arch}` -> package.
const PACKAGES = {
  'linux-x64': 'lantern-docs-search-linux-x64',
  'linux-arm64': 'lantern-docs-search-linux-arm64',
};

function binary() {
  if (process.env.LANTERN_BINARY) return process.env.LANTERN_BINARY;
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PACKAGES[platform];
  if (!pkg) {
    console.error(`lantern: no build for ${platform}; Lantern is built for ${Object.keys(PACKAGES).join(' and ')}.`);
    console.error('lantern: set LANTERN_BINARY to a lantern binary to run it instead.');
    process.exit(1);
  }
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'lantern');
  } catch {
    console.error(`lantern: the package ${pkg}, which carries the binary for ${platform}, is not installed.`);
    console.error('lantern: npm installs it as an optional dependency; install again without --omit=optional (or --no-optional).');
    process.exit(1);
  }
}

const bin = binary();
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
