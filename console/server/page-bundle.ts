/**
 * The console's page, bundled by esbuild when the console starts: console/web/main.tsx with Preact and every other
 * import, and its stylesheet, as two strings held in memory. Nothing is fetched from a CDN, so the page works
 * without a network; nothing is written to disk, so a read-only install (npx, a global install) serves it too.
 * The source ships with the package (package.json `files`) because esbuild, a dependency already, builds it in a
 * fraction of a second: one build for the checkout and the installed package, with no second copy to keep in step.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** The bundled page: its script and its stylesheet. */
export interface PageBundle {
  readonly script: string;
  readonly style: string;
}

/** console/web/main.tsx from this file in the checkout (console/server/) or in the package (dist/console/server/). */
export function pageEntry(here: string = __dirname): string {
  const candidates = [
    path.join(here, '..', 'web', 'main.tsx'),
    path.join(here, '..', '..', '..', 'console', 'web', 'main.tsx'),
  ];
  const found = candidates.find((file) => existsSync(file));
  if (found === undefined) throw new Error(`the console's page source is missing: looked for ${candidates.join(', ')}`);
  return found;
}

/** Bundles the page, minified, for the browsers of the last few years (ES2022). */
export async function bundlePage(entry: string = pageEntry()): Promise<PageBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    minify: true,
    format: 'iife',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: 'out',
    loader: { '.css': 'css' },
    logLevel: 'silent',
    legalComments: 'none',
  });
  const script = result.outputFiles.find((f) => f.path.endsWith('.js'))?.text ?? '';
  const style = result.outputFiles.find((f) => f.path.endsWith('.css'))?.text ?? '';
  return { script, style };
}
