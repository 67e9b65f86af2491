/**
 * Where this package's own handlers (trigger, notifier, reconciler) are, for NodejsFunction to bundle: always the
 * TypeScript sources. In this repository they are beside lib/; the installed package ships them at its root
 * (`functions/`, next to `dist/`) because esbuild tree-shakes ES-module sources but bundles compiled CommonJS whole
 * (measured: the trigger 446 KB from its source, 1,350 KB from dist/functions/trigger.js; docs/packaging.md). The
 * compiled file is the fallback of a package copied without its sources.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';

const CANDIDATES = (name: string) => [
  // this repository: lib/handler-entry.ts beside functions/
  path.join(__dirname, '..', 'functions', `${name}.ts`),
  // the installed package: dist/lib/handler-entry.js, with the sources at the package root
  path.join(__dirname, '..', '..', 'functions', `${name}.ts`),
  path.join(__dirname, '..', 'functions', `${name}.js`),
];

export function handlerEntry(name: string): string {
  const found = CANDIDATES(name).find((file) => existsSync(file));
  if (found === undefined)
    throw new Error(
      `handler ${name} is missing from the package (looked in ${CANDIDATES(name).join(', ')}); reinstall it`,
    );
  return found;
}
