#!/usr/bin/env node
// The package bin (`npm link`, a global install): runs bin/occurrences.ts through tsx, resolved from this package
// rather than from the working directory, so it works from anywhere.
require('tsx/cjs/api').register();
require('../occurrences.ts');
