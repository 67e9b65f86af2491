/**
 * Every relative link in the manual and its pages leads somewhere: the README, the root documents a published
 * package carries (CHANGELOG, CONTRIBUTING, SECURITY) and docs/*.md. A link names a file or folder that exists, and
 * its `#anchor`, when it has one, a heading of that Markdown file, slugged as GitHub slugs them. A page moved or a
 * heading reworded then fails here instead of leaving a reader at a 404 or the top of a page.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, relativeLinks } from './markdown-links';

const ROOT = path.resolve(__dirname, '..', '..');

const ROOT_PAGES = ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'SECURITY.md'].filter((page) =>
  existsSync(path.join(ROOT, page)),
);
const DOC_PAGES = readdirSync(path.join(ROOT, 'docs'))
  .filter((file) => file.endsWith('.md'))
  .map((file) => `docs/${file}`);
const PAGES = [...ROOT_PAGES, ...DOC_PAGES].sort();

describe('relative links in the README and docs/', () => {
  it('finds the pages', () => {
    expect(PAGES).toContain('README.md');
    expect(DOC_PAGES.length).toBeGreaterThan(0);
  });

  it.each(PAGES)('%s: every relative link names an existing file and heading', (page) => {
    expect(brokenLinks(ROOT, page)).toEqual([]);
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
