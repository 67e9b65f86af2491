// npm run build starts from an empty dist/: tsc never deletes the output of a source that was renamed or removed, and
// package.json ships all of dist/, so a stale file would be published. (Node, not rm -rf, so it runs anywhere npm does.)
const { rmSync } = require('node:fs');
const { join } = require('node:path');

rmSync(join(__dirname, '..', '..', 'dist'), { recursive: true, force: true });
