/**
 * One BenchSession (its own moto) for a test file's describe block: started before its tests, stopped after them.
 * Returns a getter, since the session exists only once `beforeAll` ran.
 */
import { afterAll, beforeAll } from 'vitest';
import { BenchSession } from '../../bench/bench-session';

export function useBenchSession(): () => BenchSession {
  let session: BenchSession | undefined;
  beforeAll(async () => {
    session = await BenchSession.start();
  });
  afterAll(async () => {
    await session?.stop();
  });
  return () => {
    if (session === undefined) throw new Error('the bench session is used before beforeAll started it');
    return session;
  };
}
