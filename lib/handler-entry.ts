/**
 * Where this package's own handlers (trigger, notifier, reconciler) are, for NodejsFunction to bundle. In this
 * repository they are the TypeScript sources beside lib/; in the installed package they are the compiled JavaScript
 * beside dist/lib/. The user's app bundles them from there with its own esbuild, like any of its own entries.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';

const FUNCTIONS_DIR = path.join(__dirname, '..', 'functions');

export function handlerEntry(name: string): string {
  for (const extension of ['.ts', '.js']) {
    const file = path.join(FUNCTIONS_DIR, `${name}${extension}`);
    if (existsSync(file)) return file;
  }
  throw new Error(`handler ${name} is missing from ${FUNCTIONS_DIR}: the package is incomplete; reinstall it`);
}
