/**
 * What prepack changes for the tarball (scripts/package/pack-files.ts): the published package.json carries no
 * scripts, and a shipped page's link to a file the tarball lacks becomes a link into the repository at the release's
 * tag, or plain text when package.json names no repository. test/package/pack.test.ts checks the real tarball.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  isShipped,
  type LinkContext,
  prepare,
  publishedManifest,
  repositoryWebUrl,
  restore,
  rewriteLinks,
} from '../../scripts/package/pack-files';

const FILES = ['dist', 'functions/**/*.ts', 'console/web/**/*.tsx', 'README.md', 'docs', 'CHANGELOG.md', 'SECURITY.md'];
const REPOSITORY = ['examples/two-workers', 'CONTRIBUTING.md', '.ci/run', 'docs/cli.md', 'README.md', 'SECURITY.md'];

function context(page: string, repositoryUrl: string | undefined): LinkContext {
  return {
    page,
    shipped: (file) => isShipped(file, FILES),
    kind: (file) => (!REPOSITORY.includes(file) ? undefined : file.includes('.') ? 'file' : 'folder'),
    repositoryUrl,
    tag: 'v1.0.0',
  };
}

describe('publishedManifest', () => {
  it('drops the scripts, which name files the tarball lacks, and keeps everything else', () => {
    const manifest = {
      name: 'p',
      version: '1.0.0',
      bin: { x: 'bin/x.cjs' },
      scripts: { local: 'tsx scripts/local.ts' },
    };

    expect(publishedManifest(manifest)).toEqual({ name: 'p', version: '1.0.0', bin: { x: 'bin/x.cjs' } });
  });
});

describe('repositoryWebUrl', () => {
  it.each([
    ['git+https://github.com/acme/scheduled-jobs-stack.git', 'https://github.com/acme/scheduled-jobs-stack'],
    ['https://github.com/acme/scheduled-jobs-stack', 'https://github.com/acme/scheduled-jobs-stack'],
    ['git@github.com:acme/scheduled-jobs-stack.git', 'https://github.com/acme/scheduled-jobs-stack'],
    ['github:acme/scheduled-jobs-stack', 'https://github.com/acme/scheduled-jobs-stack'],
  ])('reads %s as %s', (url, web) => {
    expect(repositoryWebUrl({ repository: { type: 'git', url } })).toBe(web);
    expect(repositoryWebUrl({ repository: url })).toBe(web);
  });

  it('gives nothing without a repository, or for a host whose page addresses it does not know', () => {
    expect(repositoryWebUrl({})).toBeUndefined();
    expect(repositoryWebUrl({ repository: { url: '' } })).toBeUndefined();
    expect(repositoryWebUrl({ repository: 'https://gitlab.com/acme/p.git' })).toBeUndefined();
  });
});

describe('isShipped', () => {
  it('follows the files list: names, folders and globs; package.json, README and LICENSE always', () => {
    expect(isShipped('docs/cli.md', FILES)).toBe(true);
    expect(isShipped('functions/protocol/errors.ts', FILES)).toBe(true);
    expect(isShipped('functions/index.ts', FILES)).toBe(true);
    expect(isShipped('console/web/main.tsx', FILES)).toBe(true);
    expect(isShipped('LICENSE', FILES)).toBe(true);
    expect(isShipped('package.json', FILES)).toBe(true);
    expect(isShipped('CONTRIBUTING.md', FILES)).toBe(false);
    expect(isShipped('examples/two-workers', FILES)).toBe(false);
    expect(isShipped('functions/index.js', FILES)).toBe(false);
    expect(isShipped('docsx/a.md', FILES)).toBe(false);
  });
});

describe('rewriteLinks', () => {
  const page = [
    'A complete app: [examples/two-workers](examples/two-workers). More in [CONTRIBUTING.md](CONTRIBUTING.md#the-two-commands).',
    'CI runs both ([.ci/run](.ci/run)); the CLI: [docs/cli.md](docs/cli.md#run), [top](#top), [npm](https://npmjs.com).',
    '`[code](CONTRIBUTING.md)` stays.',
    '```md',
    '[in a fence](CONTRIBUTING.md)',
    '```',
    '',
  ].join('\n');

  it('points links to unshipped files into the repository at the tag (tree/ for a folder), anchors kept', () => {
    const out = rewriteLinks(page, context('README.md', 'https://github.com/acme/p'));

    expect(out).toContain('[examples/two-workers](https://github.com/acme/p/tree/v1.0.0/examples/two-workers)');
    expect(out).toContain('[CONTRIBUTING.md](https://github.com/acme/p/blob/v1.0.0/CONTRIBUTING.md#the-two-commands)');
    expect(out).toContain('[.ci/run](https://github.com/acme/p/blob/v1.0.0/.ci/run)');
    expect(out).toContain('[docs/cli.md](docs/cli.md#run), [top](#top), [npm](https://npmjs.com)');
    expect(out).toContain('`[code](CONTRIBUTING.md)` stays.');
    expect(out).toContain('[in a fence](CONTRIBUTING.md)');
  });

  it('unlinks them, keeping the text, when package.json names no repository', () => {
    const out = rewriteLinks(page, context('README.md', undefined));

    expect(out.split('\n').slice(0, 2)).toEqual([
      'A complete app: examples/two-workers. More in CONTRIBUTING.md.',
      'CI runs both (.ci/run); the CLI: [docs/cli.md](docs/cli.md#run), [top](#top), [npm](https://npmjs.com).',
    ]);
  });

  it('resolves a link from a page under docs/ against its folder', () => {
    const out = rewriteLinks('[c](../CONTRIBUTING.md) [s](../SECURITY.md) [r](../README.md#install)', {
      ...context('docs/development.md', 'https://github.com/acme/p'),
    });

    expect(out).toBe(
      '[c](https://github.com/acme/p/blob/v1.0.0/CONTRIBUTING.md) [s](../SECURITY.md) [r](../README.md#install)',
    );
  });

  it('unlinks a link to a path the repository lacks too, rather than invent an address', () => {
    expect(rewriteLinks('[gone](scripts/gone.ts)', context('README.md', 'https://github.com/acme/p'))).toBe('gone');
  });
});

describe('prepare and restore, on a package folder of their own', () => {
  let root: string;
  const manifest = {
    name: 'p',
    version: '1.0.0',
    files: ['dist', 'docs', 'README.md'],
    scripts: { build: 'tsc', local: 'tsx scripts/local.ts' },
    repository: { type: 'git', url: 'git+https://github.com/acme/p.git' },
  };
  const readme = '# p\n\nAn app: [two-workers](examples/two-workers); [the CLI](docs/cli.md).\n';
  const cli = '# CLI\n\nFrom a clone: [CONTRIBUTING](../CONTRIBUTING.md#clone).\n';
  const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

  function makePackage(): void {
    root = mkdtempSync(path.join(tmpdir(), 'pack-files-'));
    mkdirSync(path.join(root, 'docs'));
    mkdirSync(path.join(root, 'examples', 'two-workers'), { recursive: true });
    writeFileSync(path.join(root, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(path.join(root, 'README.md'), readme);
    writeFileSync(path.join(root, 'docs', 'cli.md'), cli);
    writeFileSync(path.join(root, 'CONTRIBUTING.md'), '# Contributing\n\n## Clone\n');
  }

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes what the tarball gets, then puts every original back', () => {
    makePackage();
    const manifestText = read('package.json');

    expect(prepare(root)).toEqual(['README.md', 'docs/cli.md', 'package.json']);
    expect(JSON.parse(read('package.json')).scripts).toBeUndefined();
    expect(JSON.parse(read('package.json')).repository).toEqual(manifest.repository);
    expect(read('README.md')).toContain('[two-workers](https://github.com/acme/p/tree/v1.0.0/examples/two-workers)');
    expect(read('README.md')).toContain('[the CLI](docs/cli.md)');
    expect(read('docs/cli.md')).toContain(
      '[CONTRIBUTING](https://github.com/acme/p/blob/v1.0.0/CONTRIBUTING.md#clone)',
    );
    expect(read('CONTRIBUTING.md')).toBe('# Contributing\n\n## Clone\n'); // not shipped: left alone

    expect(restore(root)).toEqual(['README.md', 'docs/cli.md', 'package.json']);
    expect(read('package.json')).toBe(manifestText);
    expect(read('README.md')).toBe(readme);
    expect(read('docs/cli.md')).toBe(cli);
    expect(restore(root)).toEqual([]);
  });

  it('after a pack that died before postpack, the next prepare starts from the originals, not the rewritten files', () => {
    makePackage();
    prepare(root);
    prepare(root);
    restore(root);

    expect(JSON.parse(read('package.json')).scripts).toEqual(manifest.scripts);
    expect(read('README.md')).toBe(readme);
  });
});
