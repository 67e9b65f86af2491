/**
 * Every relative link in the manual and its pages leads somewhere: the README, the root documents a published
 * package carries (CHANGELOG, CONTRIBUTING, SECURITY) and docs/*.md. A link names a file or folder that exists, and
 * its `#anchor`, when it has one, a heading of that Markdown file, slugged as GitHub slugs them. A page moved or a
 * heading reworded then fails here instead of leaving a reader at a 404 or the top of a page.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..');

const ROOT_PAGES = ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'SECURITY.md'].filter((page) =>
  existsSync(path.join(ROOT, page)),
);
const DOC_PAGES = readdirSync(path.join(ROOT, 'docs'))
  .filter((file) => file.endsWith('.md'))
  .map((file) => `docs/${file}`);
const PAGES = [...ROOT_PAGES, ...DOC_PAGES].sort();

/** The text outside fenced code blocks and inline code, where a `[x](y)` is a link and not an example. */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, a repeat numbered -1, -2. */
function anchorsOf(markdown: string): Set<string> {
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

/** The targets of the page's inline links and images that stay inside the repository. */
function relativeLinks(markdown: string): string[] {
  const targets = [...proseOf(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (match) => match[1],
  );
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link from `page`, or undefined when it leads somewhere. */
function brokenLink(page: string, target: string): string | undefined {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), file);
  if (!resolved.startsWith(ROOT)) return `${target}: leaves the repository`;
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md'))
    return `${target}: an anchor in a non-Markdown file`;
  if (!anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)))
    return `${target}: no heading with that anchor in ${path.relative(ROOT, resolved)}`;
  return undefined;
}

describe('relative links in the README and docs/', () => {
  it('finds the pages', () => {
    expect(PAGES).toContain('README.md');
    expect(DOC_PAGES.length).toBeGreaterThan(0);
  });

  it.each(PAGES)('%s: every relative link names an existing file and heading', (page) => {
    const markdown = readFileSync(path.join(ROOT, page), 'utf8');
    const broken = relativeLinks(markdown)
      .map((target) => brokenLink(page, target))
      .filter((problem): problem is string => problem !== undefined);
    expect(broken).toEqual([]);
  });
});

describe('the link checker itself', () => {
  it('slugs headings as GitHub does, numbering repeats', () => {
    const anchors = anchorsOf('# Run it locally: `npm run local`\n## Figures\n## Figures\n```\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['run-it-locally-npm-run-local', 'figures', 'figures-1']);
  });

  it('ignores links in code and absolute URLs, keeps relative ones and bare anchors', () => {
    const links = relativeLinks(
      '[a](docs/a.md#x) [b](https://example.com) [c](#top) `[d](nope.md)`\n```\n[e](nope.md)\n```\n![f](img.png)',
    );
    expect(links).toEqual(['docs/a.md#x', '#top', 'img.png']);
  });
});
