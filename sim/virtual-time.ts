/**
 * Virtual time for the simulation: a discrete-event loop that stands in for the global setTimeout/clearTimeout
 * while a run executes, so the protocol's own timers (heartbeat, safety margin, deadline, retry pauses) run
 * unchanged on a clock the simulation controls.
 *
 * Every timer belongs to the actor (a Lambda invocation) whose code scheduled it, found through AsyncLocalStorage.
 * That is what lets the simulation kill a process (its timers and pending responses never fire again) or freeze it
 * (a long GC pause: everything it was waiting for fires late, in the order it fell due, when it resumes).
 *
 * Not usable from vitest's fake timers: a run installs its own, and restores the real ones when it ends.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** One Lambda invocation (or one system process such as a queue poller): what can die or freeze. */
export class Actor {
  dead = false;
  /** True time until which the process is frozen; its timers wait until then. */
  frozenUntil = 0;
  readonly name: string;
  constructor(
    readonly kind: 'trigger' | 'worker' | 'notifier' | 'reconciler' | 'operator' | 'app',
    /** 1-based count of actors of this kind in the run. */
    readonly index: number,
    /** Added to true time to give the actor's clock. */
    readonly skewMs: number,
  ) {
    this.name = `${kind}#${index}`;
  }
}

interface Timer {
  at: number;
  /** When it first fell due: a frozen actor's overdue timers fire in this order when it resumes. */
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
  readonly actor: Actor | null;
  cancelled: boolean;
}

const current = new AsyncLocalStorage<Actor>();
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const realSetImmediate = globalThis.setImmediate;

/** Let every pending promise continuation run: one real macrotask turn drains the microtask queue. */
const drainMicrotasks = () => new Promise<void>((resolve) => realSetImmediate(resolve));

export class VirtualTime {
  private readonly heap: Timer[] = [];
  private seq = 0;
  events = 0;

  constructor(public now: number) {}

  /** The actor whose code is running, if any. */
  static actor(): Actor | undefined {
    return current.getStore();
  }

  /** Run `fn` as `actor`: timers it schedules, directly or after awaits, belong to that actor. */
  runAs<T>(actor: Actor, fn: () => T): T {
    return current.run(actor, fn);
  }

  /** Schedule on behalf of the running actor (or of the system when none is running). */
  schedule(delayMs: number, fn: () => void, actor: Actor | null = current.getStore() ?? null): Timer {
    const at = this.now + Math.max(0, Number.isFinite(delayMs) ? delayMs : 0);
    const timer: Timer = { at, due: at, seq: ++this.seq, fn, actor, cancelled: false };
    this.push(timer);
    return timer;
  }

  /** A timer that belongs to no actor: it fires even if the actor that asked for it died or froze. */
  scheduleSystem(delayMs: number, fn: () => void): Timer {
    return this.schedule(delayMs, fn, null);
  }

  /** Replace the global timers with virtual ones until the returned function is called. */
  install(): () => void {
    const g = globalThis as unknown as Record<string, unknown>;
    g.setTimeout = (fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
      this.schedule(ms ?? 0, () => fn(...args));
    g.clearTimeout = (timer: unknown) => {
      if (timer && typeof timer === 'object' && 'cancelled' in timer) (timer as Timer).cancelled = true;
    };
    return () => {
      g.setTimeout = realSetTimeout;
      g.clearTimeout = realClearTimeout;
    };
  }

  /**
   * Fire timers in time order until none is left or the next is after `horizon`. Between two timers every promise
   * continuation runs, so code between awaits takes no virtual time.
   */
  async runUntil(horizon: number, maxEvents = 1_000_000): Promise<void> {
    for (;;) {
      await drainMicrotasks();
      const next = this.heap[0];
      if (next === undefined || next.at > horizon) return;
      this.pop();
      if (next.cancelled || next.actor?.dead) continue;
      if (next.actor !== null && next.actor.frozenUntil > next.at) {
        next.at = next.actor.frozenUntil;
        this.push(next);
        continue;
      }
      if (++this.events > maxEvents) throw new Error(`simulation did not settle within ${maxEvents} events`);
      this.now = next.at;
      if (next.actor !== null) current.run(next.actor, next.fn);
      else current.exit(next.fn);
    }
  }

  pending(): number {
    return this.heap.filter((t) => !t.cancelled && !t.actor?.dead).length;
  }

  // A binary heap ordered by (at, due, seq).
  private before(a: Timer, b: Timer): boolean {
    return a.at !== b.at ? a.at < b.at : a.due !== b.due ? a.due < b.due : a.seq < b.seq;
  }

  private push(t: Timer): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (last === undefined || h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.before(h[l], h[m])) m = l;
      if (r < h.length && this.before(h[r], h[m])) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }
}
