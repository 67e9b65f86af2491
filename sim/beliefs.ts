/**
 * Which worker believes it holds the occurrence, and from when to when: read from the worker's own log lines (a
 * claim starts a belief, any line that says it stopped ends it) and from its death. The figures measure how long
 * two workers both believed it; the belief of a process that died ends with the process.
 */
import type { Belief } from './outcome';
import type { Actor } from './virtual-time';

/** The worker's log messages after which it no longer acts as the holder. */
const END_OF_BELIEF = new Set([
  'aborting job',
  'lease lost; stopping without writing',
  'lease lost before complete; the report stays committed for the next holder to adopt',
  'occurrence SUCCEEDED',
  'attempt failed; retry scheduled',
  'occurrence FAILED',
  'could not record the failed attempt',
  'lease lost while recording a failed attempt',
  'could not record SUCCEEDED; the redelivery will adopt the committed report',
]);

export class Beliefs {
  /** Every belief of the run, in the order of the claims. */
  readonly all: Belief[] = [];
  private readonly byActor = new Map<Actor, Belief[]>();

  /** What the worker's log line `message`, about `leaseId`, says about its belief. */
  onLog(actor: Actor, leaseId: string, message: string, at: number): void {
    if (message === 'claimed occurrence') this.start(actor, leaseId, at);
    else if (END_OF_BELIEF.has(message)) this.end(leaseId, at, message);
  }

  /** A process that dies stops believing anything. */
  actorDied(actor: Actor, at: number, why: string): void {
    for (const belief of this.byActor.get(actor) ?? []) close(belief, at, `process died (${why})`);
  }

  /** The run ended with these beliefs still held. */
  endAll(at: number): void {
    for (const belief of this.all) close(belief, at, 'run ended');
  }

  private start(actor: Actor, leaseId: string, at: number): void {
    const belief: Belief = { leaseId, actor: actor.name, from: at, to: undefined };
    this.all.push(belief);
    this.byActor.set(actor, [...(this.byActor.get(actor) ?? []), belief]);
  }

  private end(leaseId: string, at: number, why: string): void {
    const belief = this.all.find((b) => b.leaseId === leaseId && b.to === undefined);
    if (belief) close(belief, at, why);
  }
}

/** Ends a belief that is still open; a closed one keeps its end. */
function close(belief: Belief, at: number, why: string): void {
  if (belief.to !== undefined) return;
  belief.to = at;
  belief.end = why;
}
