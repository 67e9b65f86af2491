/**
 * What `npm pack` and `npm publish` ship differs from this repository's own files in two ways, made in prepack and
 * undone in postpack (package.json: "prepack" runs `tsx scripts/package/pack-files.ts prepare` after the build,
 * "postpack" runs `… restore`):
 *
 * - **package.json without `scripts`.** Every script of this repository names something a user's install lacks
 *   (`scripts/`, `bench/`, `tsx bin/occurrences.ts`, vitest, biome); the package itself needs none at install.
 * - **Markdown links that lead somewhere from the unpacked tarball.** A link in a shipped page (README.md,
 *   CHANGELOG.md, SECURITY.md, docs/) to a file the tarball lacks (`examples/two-workers`, `CONTRIBUTING.md`,
 *   `.ci/run`) becomes an absolute link into the repository at the release's tag, `<repository>/blob/v<version>/<path>`,
 *   when package.json names a GitHub repository (the release workflow sets `repository.url` before it publishes);
 *   otherwise the link goes and its text stays. No URL is ever made up.
 *
 * Why our own rather than a library: clean-package would do the first, nothing maintained does the second, and both
 * need the same backup. The originals wait in node_modules/.cache/scheduled-jobs-stack-pack/ until postpack puts them
 * back; a pack that died in between (postpack never ran) is undone by the next prepare before it starts.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** Where prepare keeps the originals of a package at `root` until restore puts them back. */
function backupDir(root: string): string {
  return path.join(root, 'node_modules', '.cache', 'scheduled-jobs-stack-pack');
}

export interface Manifest {
  readonly name?: string;
  readonly version?: string;
  readonly files?: readonly string[];
  readonly scripts?: Readonly<Record<string, string>>;
  readonly repository?: string | { readonly type?: string; readonly url?: string };
  readonly [field: string]: unknown;
}

/** The manifest as published: the same, without `scripts`. */
export function publishedManifest(manifest: Manifest): Manifest {
  const { scripts: _scripts, ...published } = manifest;
  return published;
}

/**
 * The web address of the repository package.json names, for a GitHub repository only (the one host whose
 * `/blob/<tag>/<path>` we know to be a page): `git+https://github.com/o/r.git`, `https://github.com/o/r`,
 * `git@github.com:o/r.git` and the shorthand `github:o/r` or `o/r` all give `https://github.com/o/r`.
 */
export function repositoryWebUrl(manifest: Manifest): string | undefined {
  const raw = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  if (raw === undefined || raw.trim() === '') return undefined;
  const match =
    /^(?:git\+)?(?:https?|git|ssh):\/\/(?:[^@/]+@)?github\.com\/([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(raw) ??
    /^git@github\.com:([\w.-]+)\/([\w.-]+?)(?:\.git)?$/.exec(raw) ??
    /^(?:github:)?([\w.-]+)\/([\w.-]+)$/.exec(raw);
  return match === null ? undefined : `https://github.com/${match[1]}/${match[2]}`;
}

/**
 * Whether npm ships `file` (a path from the package's root) under package.json's `files`: an entry names the file,
 * a folder above it, or a glob matching it (`*` within a segment, `**` across segments). npm always ships
 * package.json, the README and the license as well.
 */
export function isShipped(file: string, files: readonly string[]): boolean {
  if (/^(package\.json|readme(\.[^/]*)?|licen[cs]e(\.[^/]*)?)$/i.test(file)) return true;
  return files.some((entry) => {
    const pattern = entry.replace(/^\.?\//, '').replace(/\/$/, '');
    if (!/[*?[]/.test(pattern)) return file === pattern || file.startsWith(`${pattern}/`);
    const source = pattern
      .split('/')
      .map((segment) =>
        segment === '**' ? '(?:.*/)?' : `${segment.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '[^/]*')}/`,
      )
      .join('')
      .replace(/\/$/, '');
    return new RegExp(`^${source}$`).test(file);
  });
}

export interface LinkContext {
  /** The page's path from the package's root: `README.md`, `docs/cli.md`. */
  readonly page: string;
  /** Whether the tarball holds this path (a file, or a folder with a shipped file). */
  readonly shipped: (file: string) => boolean;
  /** Whether the repository has this path, and whether it is a folder. */
  readonly kind: (file: string) => 'file' | 'folder' | undefined;
  /** `https://github.com/o/r`, or undefined when package.json names no GitHub repository. */
  readonly repositoryUrl: string | undefined;
  /** The release's tag, `v<version>`. */
  readonly tag: string;
}

const LINK = /(`[^`\n]*`)|(!?)\[([^\]]*)\]\(\s*<?([^)\s>]+)>?((?:\s+"[^"]*")?)\s*\)/g;

/**
 * The page with each relative link to a path the tarball lacks made absolute into the repository at the tag, or
 * unlinked to its text when there is no repository URL or the path is not in the repository either. Fenced code
 * blocks, inline code, absolute URLs and links to shipped files are left as they are.
 */
export function rewriteLinks(markdown: string, context: LinkContext): string {
  return markdown
    .split(/(^(?:```|~~~)[\s\S]*?^(?:```|~~~)[^\n]*$)/m)
    .map((part, index) => (index % 2 === 1 ? part : rewriteProse(part, context)))
    .join('');
}

function rewriteProse(prose: string, context: LinkContext): string {
  return prose.replace(LINK, (whole, code, bang: string, text: string, target: string, title: string) => {
    if (code !== undefined) return whole;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return whole;
    const [file, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(context.page), file));
    if (resolved.startsWith('..') || context.shipped(resolved)) return whole;
    const kind = context.kind(resolved);
    if (context.repositoryUrl === undefined || kind === undefined) return bang === '' ? text : whole;
    const url = `${context.repositoryUrl}/${kind === 'folder' ? 'tree' : 'blob'}/${context.tag}/${resolved}`;
    return `${bang}[${text}](${url}${anchor === undefined ? '' : `#${anchor}`}${title})`;
  });
}

/** The Markdown pages of the package that ship: the root ones and those under shipped folders. */
function shippedPages(root: string, manifest: Manifest): string[] {
  const files = manifest.files ?? [];
  const pages = ['README.md', 'CHANGELOG.md', 'SECURITY.md', 'CONTRIBUTING.md'].filter(
    (page) => existsSync(path.join(root, page)) && isShipped(page, files),
  );
  const docs = existsSync(path.join(root, 'docs'))
    ? readdirMarkdown(root, 'docs').filter((page) => isShipped(page, files))
    : [];
  return [...pages, ...docs];
}

function readdirMarkdown(root: string, folder: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')));
}

function backUp(root: string, file: string): void {
  const copy = path.join(backupDir(root), file);
  mkdirSync(path.dirname(copy), { recursive: true });
  cpSync(path.join(root, file), copy);
}

/** Puts back every original a prepare saved, then forgets them; gives the files put back. */
export function restore(root = ROOT): string[] {
  const backup = backupDir(root);
  if (!existsSync(backup)) return [];
  const saved = readdirSync(backup, { recursive: true, encoding: 'utf8' })
    .filter((file) => statSync(path.join(backup, file)).isFile())
    .map((file) => file.split(path.sep).join('/'))
    .sort();
  for (const file of saved) cpSync(path.join(backup, file), path.join(root, file));
  rmSync(backup, { recursive: true, force: true });
  return saved;
}

/**
 * Writes the published package.json and the shipped pages' links in place, each original saved first; gives the
 * files changed. What an unfinished pack left is put back first.
 */
export function prepare(root = ROOT): string[] {
  const leftover = restore(root);
  if (leftover.length > 0) console.error(`pack-files: put back ${leftover.join(', ')}, left by an unfinished pack`);
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
  const files = manifest.files ?? [];
  const context = {
    shipped: (file: string) => isShipped(file, files),
    kind: (file: string) => {
      const full = path.join(root, file);
      if (!existsSync(full)) return undefined;
      return statSync(full).isDirectory() ? ('folder' as const) : ('file' as const);
    },
    repositoryUrl: repositoryWebUrl(manifest),
    tag: `v${manifest.version}`,
  };
  const changed: string[] = [];
  for (const page of shippedPages(root, manifest)) {
    const before = readFileSync(path.join(root, page), 'utf8');
    const after = rewriteLinks(before, { ...context, page });
    if (after === before) continue;
    backUp(root, page);
    writeFileSync(path.join(root, page), after);
    changed.push(page);
  }
  backUp(root, 'package.json');
  writeFileSync(path.join(root, 'package.json'), `${JSON.stringify(publishedManifest(manifest), null, 2)}\n`);
  changed.push('package.json');
  return changed;
}

if (require.main === module) {
  const command = process.argv[2];
  if (command === 'prepare') {
    const changed = prepare();
    console.error(`pack-files: the published ${changed.join(', ')} (put back after the pack)`);
  } else if (command === 'restore') {
    const restored = restore();
    console.error(`pack-files: put back ${restored.length === 0 ? 'nothing' : restored.join(', ')}`);
  } else {
    console.error('usage: tsx scripts/package/pack-files.ts prepare|restore');
    process.exitCode = 2;
  }
}
