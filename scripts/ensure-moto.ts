/**
 * `npx tsx scripts/ensure-moto.ts`: make sure moto_server is there (on the PATH, or installed once into the user's
 * cache) and say which one. CI runs it before the local run and the tests. The logic lives in
 * testing/local/moto-server.ts, which the published test kit uses too; this file is only its command line, kept out
 * of the package.
 */
import { spawnSync } from 'node:child_process';
import { ensureMotoServer } from '../testing/local/moto-server';

try {
  const moto = ensureMotoServer((line) => console.log(line));
  const python = moto.command === 'moto_server' ? 'python3' : moto.command;
  const version = spawnSync(python, ['-c', 'import moto; print(moto.__version__)'], { encoding: 'utf8' });
  const where = moto.command === 'moto_server' ? 'moto_server on the PATH' : [moto.command, ...moto.args].join(' ');
  console.log(`moto_server: ${where}${version.status === 0 ? ` (moto ${version.stdout.trim()})` : ''}`);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
