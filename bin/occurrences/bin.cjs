#!/usr/bin/env node
// The package bin (`npm link`, a global install): runs bin/occurrences.ts through tsx, resolved from this package
// rather than from the working directory, so it works from anywhere.
// The SDK's notice that its 2027 releases need Node 22 would follow every command on Node 20; the README states it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
require('tsx/cjs/api').register();
require('../occurrences.ts');
