/**
 * Where moto_server comes from (ensureMotoServer), with fake executables on a PATH of their own: the user's moto on
 * the PATH, this package's venv in the user's cache, or an install into that cache that leaves nothing behind when
 * it fails. Nothing here reaches PyPI; the fakes print what pip and venv print when they fail.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureMotoServer,
  MOTO_PIN,
  MOTO_VERSION,
  MotoUnavailableError,
  motoCacheVenv,
} from '../../../testing/local/moto-server';

const PIP_UNREACHABLE =
  'ERROR: Could not find a version that satisfies the requirement moto[server]==5.2.1 (from versions: none)';
const NO_ENSUREPIP = 'The virtual environment was not created successfully because ensurepip is not available.';

/** The Python a venv gets: pip "installs" by making lib/moto, and `-m moto.server` runs once that is there. */
const VENV_PYTHON = `#!/bin/sh
PATH=/usr/bin:/bin
here="\${0%/*}"
echo "venv-python $*" >> "$CALLS"
case "$1 $2" in
  "-m pip") [ "$FAKE_PIP" = fail ] && { echo "${PIP_UNREACHABLE}" >&2; exit 1; }; mkdir -p "$here/../lib/moto";;
  "-m moto.server") [ -d "$here/../lib/moto" ];;
  *) exit 2;;
esac
`;

/** python3 -m venv DIR: makes DIR with its Python, or, as without the python3-venv package, half of it. */
const PYTHON3 = `#!/bin/sh
PATH=/usr/bin:/bin
echo "python3 $*" >> "$CALLS"
[ "$1 $2" = "-m venv" ] || exit 2
mkdir -p "$3/bin"
[ "$FAKE_VENV" = fail ] && { echo "${NO_ENSUREPIP}" >&2; exit 1; }
cp "$FAKE_VENV_PYTHON" "$3/bin/python"
`;

let dir: string;
let bin: string;
let cacheHome: string;
let venv: string;
let log: string[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'moto-server-'));
  bin = path.join(dir, 'bin');
  mkdirSync(bin);
  executable(path.join(dir, 'venv-python'), VENV_PYTHON);
  cacheHome = path.join(dir, 'cache');
  venv = path.join(cacheHome, 'scheduled-jobs-stack', `moto-${MOTO_VERSION}`);
  log = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function executable(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o755 });
}

/** ensureMotoServer with only the fakes on the PATH; `fake` says which step fails. */
function ensure(fake: { venv?: 'fail'; pip?: 'fail' } = {}) {
  const env = {
    PATH: bin,
    CALLS: path.join(dir, 'calls.log'),
    FAKE_VENV_PYTHON: path.join(dir, 'venv-python'),
    FAKE_VENV: fake.venv ?? '',
    FAKE_PIP: fake.pip ?? '',
  };
  return ensureMotoServer((line) => log.push(line), { env, venv });
}

function failure(fake: Parameters<typeof ensure>[0] = {}): MotoUnavailableError {
  try {
    ensure(fake);
  } catch (error) {
    expect(error).toBeInstanceOf(MotoUnavailableError);
    return error as MotoUnavailableError;
  }
  throw new Error('ensureMotoServer did not throw');
}

const calls = () => (existsSync(path.join(dir, 'calls.log')) ? readFileSync(path.join(dir, 'calls.log'), 'utf8') : '');

describe('ensureMotoServer', () => {
  it("uses the PATH's moto_server and makes nothing", () => {
    executable(path.join(bin, 'moto_server'), '#!/bin/sh\nexit 0\n');
    executable(path.join(bin, 'python3'), PYTHON3);
    expect(ensure()).toEqual({ command: 'moto_server', args: [] });
    expect(existsSync(cacheHome)).toBe(false);
    expect(calls()).toBe('');
  });

  it('uses the moto already in the cache venv and installs nothing', () => {
    mkdirSync(path.join(venv, 'bin'), { recursive: true });
    mkdirSync(path.join(venv, 'lib', 'moto'), { recursive: true });
    executable(path.join(venv, 'bin', 'python'), VENV_PYTHON);
    executable(path.join(bin, 'python3'), PYTHON3);
    expect(ensure()).toEqual({ command: path.join(venv, 'bin', 'python'), args: ['-m', 'moto.server'] });
    expect(calls()).toBe('venv-python -m moto.server --help\n');
    expect(log).toEqual([]);
  });

  it('without moto and without python3: says what to install and leaves nothing behind', () => {
    const error = failure();
    expect(error.message).toContain('python3 was not found');
    expect(error.message).toContain(`pip install "${MOTO_PIN}"`);
    expect(existsSync(cacheHome)).toBe(false);
  });

  it('removes the venv python3 made half-way (no ensurepip) and says why', () => {
    executable(path.join(bin, 'python3'), PYTHON3);
    const error = failure({ venv: 'fail' });
    expect(error.message).toContain(NO_ENSUREPIP);
    expect(error.message).toContain(`pip install "${MOTO_PIN}"`);
    expect(calls()).toContain('python3 -m venv');
    expect(existsSync(cacheHome)).toBe(false);
  });

  it("removes the venv when pip cannot install (PyPI unreachable), with pip's reason and a log of both steps", () => {
    executable(path.join(bin, 'python3'), PYTHON3);
    const error = failure({ pip: 'fail' });
    expect(error.message).toContain(PIP_UNREACHABLE);
    expect(calls()).toContain(`venv-python -m pip install --quiet --disable-pip-version-check ${MOTO_PIN}`);
    expect(existsSync(cacheHome)).toBe(false);
    expect(log).toEqual([
      expect.stringContaining(`installing ${MOTO_PIN} from PyPI into ${venv}`),
      expect.stringContaining('the install failed; removed what it had made'),
    ]);
  });

  it('keeps the rest of a cache it did not make when an install fails', () => {
    executable(path.join(bin, 'python3'), PYTHON3);
    const other = path.join(cacheHome, 'scheduled-jobs-stack', 'moto-5.1.0');
    mkdirSync(other, { recursive: true });
    failure({ pip: 'fail' });
    expect(readdirSync(path.dirname(venv))).toEqual(['moto-5.1.0']);
  });

  it('installs into the cache venv, then uses it without installing again', () => {
    executable(path.join(bin, 'python3'), PYTHON3);
    const moto = { command: path.join(venv, 'bin', 'python'), args: ['-m', 'moto.server'] };
    expect(ensure()).toEqual(moto);
    expect(readdirSync(path.dirname(venv))).toEqual([`moto-${MOTO_VERSION}`]);
    expect(log).toEqual([
      expect.stringContaining(`installing ${MOTO_PIN} from PyPI into ${venv}`),
      `installed ${MOTO_PIN} into ${venv} (to remove it: rm -rf "${venv}")`,
    ]);
    rmSync(path.join(dir, 'calls.log'));
    expect(ensure()).toEqual(moto);
    expect(calls()).not.toContain('python3');
  });

  it('removes what an install killed half-way left, but not the folder of an install still running', () => {
    executable(path.join(bin, 'python3'), PYTHON3);
    const gone = spawnSync('true').pid;
    const abandoned = `${venv}.partial-${gone}`;
    const running = `${venv}.partial-${process.ppid}`;
    mkdirSync(abandoned, { recursive: true });
    mkdirSync(running);
    ensure();
    expect(existsSync(abandoned)).toBe(false);
    expect(existsSync(running)).toBe(true);
    expect(log).toContain(`removed ${path.basename(abandoned)}, left by an install that did not finish`);
  });

  it('says how to reinstall when the cached moto no longer runs', () => {
    mkdirSync(path.join(venv, 'bin'), { recursive: true });
    executable(path.join(venv, 'bin', 'python'), VENV_PYTHON); // no lib/moto: `-m moto.server` fails
    executable(path.join(bin, 'python3'), PYTHON3);
    expect(failure().message).toContain(`rm -rf "${venv}"`);
    expect(calls()).not.toContain('python3');
  });
});

describe('motoCacheVenv', () => {
  it("is in the user's cache, by moto version, whatever the working folder", () => {
    expect(motoCacheVenv({ XDG_CACHE_HOME: '/c', HOME: '/h' })).toBe(`/c/scheduled-jobs-stack/moto-${MOTO_VERSION}`);
    expect(motoCacheVenv({ HOME: '/h' })).toBe(`/h/.cache/scheduled-jobs-stack/moto-${MOTO_VERSION}`);
  });
});
