#!/usr/bin/env node
// The package bin. Installed from the registry or a tarball, the package holds no TypeScript: this runs the compiled
// CLI, dist/bin/occurrences.js. In this checkout (`npm link`, a global install of the folder) bin/occurrences.ts is
// beside it and runs through tsx, resolved from this package rather than from the working directory, so it works from
// anywhere and a dist/ left by an earlier build never runs in place of the source (lib/handler-entry.ts also prefers
// the source). Without tsx (installed with --omit=dev) the checkout runs its dist/ too.
// The SDK's notice that its 2027 releases need Node 22 would follow every command on Node 20; the README states it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const source = join(__dirname, '..', 'occurrences.ts');
const compiled = join(__dirname, '..', '..', 'dist', 'bin', 'occurrences.js');

function tsxApi() {
  try {
    return require('tsx/cjs/api');
  } catch {
    return undefined;
  }
}

const tsx = existsSync(source) ? tsxApi() : undefined;
if (tsx !== undefined) {
  tsx.register();
  require(source);
} else if (existsSync(compiled)) {
  require(compiled);
} else {
  console.error(`occurrences: ${compiled} is missing: run npm run build here, or reinstall the package`);
  process.exitCode = 1;
}
