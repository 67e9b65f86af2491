/**
 * The link checks test/docs/links.test.ts runs on this repository's pages and test/package/pack.test.ts on the
 * unpacked tarball's: a relative link names a file or folder under the root, and its `#anchor`, when it has one, a
 * heading of that Markdown file, slugged as GitHub slugs them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The text outside fenced code blocks and inline code, where a `[x](y)` is a link and not an example. */
export function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, a repeat numbered -1, -2. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  for (const [, heading] of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const repeats = seen.get(slug) ?? 0;
    seen.set(slug, repeats + 1);
    anchors.add(repeats === 0 ? slug : `${slug}-${repeats}`);
  }
  return anchors;
}

/** The targets of the page's inline links and images, absolute URLs included. */
export function linkTargets(markdown: string): string[] {
  return [...proseOf(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (match) => match[1],
  );
}

/** The targets of the page's inline links and images that stay inside the root. */
export function relativeLinks(markdown: string): string[] {
  return linkTargets(markdown).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link from `page` (a path under `root`), or undefined when it leads somewhere. */
export function brokenLink(root: string, page: string, target: string): string | undefined {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = file === '' ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file);
  if (!resolved.startsWith(root)) return `${target}: leaves the repository`;
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md'))
    return `${target}: an anchor in a non-Markdown file`;
  if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)))
    return `${target}: no heading with that anchor in ${path.relative(root, resolved)}`;
  return undefined;
}

/** Every broken relative link of `page` under `root`, as `target: problem`. */
export function brokenLinks(root: string, page: string): string[] {
  const markdown = readFileSync(path.join(root, page), 'utf8');
  return relativeLinks(markdown)
    .map((target) => brokenLink(root, page, target))
    .filter((problem): problem is string => problem !== undefined);
}
