/**
 * The network between the adapters and the fakes. Every SDK call takes LATENCY_MS each way, and the plan's fault
 * for that call (if the bounds allow it) can fail it, slow it, lose its response after it was applied, freeze the
 * caller, or kill the caller before or after it is applied. An aborted call rejects at once, but a request already
 * on its way is still applied, as on a real network.
 */
import {
  abortError,
  describeCall,
  describeFault,
  operationOf,
  type SdkCommand,
  TABLE_OPERATIONS,
  throttledError,
  timeoutError,
  transientError,
} from './calls';
import type { CallRecord } from './outcome';
import type { ActorKind, CallFault, FaultPlan } from './plan';
import type { Applied } from './service-observer';
import { type Actor, VirtualTime } from './virtual-time';

const LATENCY_MS = 5;

/** What an SDK client's send looks like to the network. */
export type Send = (command: SdkCommand, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;

export interface SendingClient {
  send: Send;
}

/** What applies a request to the fakes, watching what it does (ServiceObserver, or a world's own). */
export interface Applier {
  apply(actor: Actor, op: string, label: string, command: SdkCommand, send: () => Promise<unknown>): Promise<Applied>;
}

/** What the network does to the processes that call through it. */
export interface NetworkHost {
  note(who: string, what: string): void;
  /** May this actor suffer one more fault without leaving the plan's bounds? */
  faultAllowed(actor: Actor, fault: CallFault): boolean;
  kill(actor: Actor, why: string): void;
  freeze(actor: Actor, ms: number): void;
}

/** One request on its way: answered at most once, by its response or by an abort. */
interface Request {
  readonly actor: Actor;
  readonly op: string;
  readonly label: string;
  readonly command: SdkCommand;
  readonly fault: CallFault | undefined;
  /** Applies the command to the fakes. */
  readonly apply: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  answered: boolean;
}

export class Network {
  /** Every call, in the order it was sent. */
  readonly calls: CallRecord[] = [];
  private readonly faultsByCall = new Map<string, CallFault>();
  private readonly callsByKind: Record<ActorKind, number> = {
    trigger: 0,
    worker: 0,
    notifier: 0,
    reconciler: 0,
    operator: 0,
    app: 0,
  };
  private readonly callsByActor = new Map<Actor, number>();

  constructor(
    private readonly plan: Pick<FaultPlan, 'callFaults' | 'storeBrownouts'>,
    private readonly vt: VirtualTime,
    private readonly t0: number,
    private readonly observer: Applier,
    private readonly host: NetworkHost,
  ) {
    for (const f of plan.callFaults) {
      const key = f.invocation === undefined ? `${f.actor}#${f.call}` : `${f.actor}${f.invocation}#${f.call}`;
      if (!this.faultsByCall.has(key)) this.faultsByCall.set(key, f.fault);
    }
  }

  /** Route this client's calls through the network for the rest of the run. */
  intercept(client: SendingClient): void {
    // The class's send, which FakeAws has stubbed for this run.
    const proto = Object.getPrototypeOf(client) as SendingClient;
    const toFakes = (command: SdkCommand) => proto.send.call(client, command);
    client.send = (command, options) => this.send(command, options?.abortSignal, () => toFakes(command));
  }

  private send(command: SdkCommand, signal: AbortSignal | undefined, apply: () => Promise<unknown>): Promise<unknown> {
    const actor = VirtualTime.actor();
    if (actor === undefined) throw new Error('an SDK call outside any simulated process');
    const op = operationOf(command);
    const label = describeCall(op, command.input);
    const fault = this.faultOf(actor, op);
    this.calls.push({ who: actor.name, op, t: this.vt.now });
    this.host.note(actor.name, `${label}${fault ? `  [fault: ${describeFault(fault)}]` : ''}`);
    return new Promise((resolve, reject) =>
      this.transmit({ actor, op, label, command, fault, apply, resolve, reject, answered: false }, signal),
    );
  }

  /** The plan's fault for this call (counted per kind of actor and per actor), or a brownout's, if any. */
  private faultOf(actor: Actor, op: string): CallFault | undefined {
    const callNo = ++this.callsByKind[actor.kind];
    const ownCallNo = (this.callsByActor.get(actor) ?? 0) + 1;
    this.callsByActor.set(actor, ownCallNo);
    let fault =
      this.faultsByCall.get(`${actor.kind}#${callNo}`) ??
      this.faultsByCall.get(`${actor.kind}${actor.index}#${ownCallNo}`);
    if (fault && !this.host.faultAllowed(actor, fault)) fault = undefined;
    if (fault === undefined && actor.kind === 'worker' && TABLE_OPERATIONS.has(op) && this.inBrownout(actor))
      fault = { kind: 'transient' };
    return fault;
  }

  private inBrownout(actor: Actor): boolean {
    const t = this.vt.now;
    return (this.plan.storeBrownouts ?? []).some(
      (b) => b.invocation === actor.index && t >= this.t0 + b.fromMs && t < this.t0 + b.fromMs + b.forMs,
    );
  }

  /** Send the request on its way, unless its fault stops it first. */
  private transmit(request: Request, signal: AbortSignal | undefined): void {
    if (signal?.aborted) {
      request.answered = true;
      request.reject(abortError('request aborted before it was sent'));
      return;
    }
    signal?.addEventListener(
      'abort',
      () => this.answer(request, () => request.reject(abortError(`request aborted: ${String(signal.reason)}`))),
      { once: true },
    );
    const { actor, fault } = request;
    if (fault?.kind === 'crash-before') {
      this.host.kill(actor, `crashed sending ${request.label}`);
      return;
    }
    if (fault?.kind === 'transient') {
      this.respond(request, () => request.reject(transientError(request.op)));
      return;
    }
    if (fault?.kind === 'throttled') {
      this.respond(request, () => request.reject(throttledError(request.op)));
      return;
    }
    if (fault?.kind === 'pause-after') this.host.freeze(actor, fault.ms);
    const arriveIn = LATENCY_MS + (fault?.kind === 'slow' ? fault.ms : 0);
    this.vt.scheduleSystem(arriveIn, () => void this.arrive(request));
  }

  /** The request reaches the service: applied (maybe twice), then answered unless its fault says otherwise. */
  private async arrive(request: Request): Promise<void> {
    const { actor, op, label, command, fault } = request;
    let result = await this.observer.apply(actor, op, label, command, request.apply);
    if (fault?.kind === 'lost-retried') {
      this.host.note('aws', `response to ${actor.name}'s ${op} lost; the SDK retries it`);
      result = await this.observer.apply(actor, op, label, command, request.apply);
    }
    if (fault?.kind === 'crash-after') this.host.kill(actor, `crashed after ${label} was applied`);
    else if (fault?.kind === 'lost-error') this.respond(request, () => request.reject(timeoutError(op)));
    else this.respond(request, () => (result.ok ? request.resolve(result.value) : request.reject(result.error)));
  }

  /** The response travels back to the caller, and is dropped if the caller already gave up on it. */
  private respond(request: Request, deliver: () => void): void {
    this.vt.schedule(LATENCY_MS, () => this.answer(request, deliver), request.actor);
  }

  private answer(request: Request, deliver: () => void): void {
    if (request.answered) return;
    request.answered = true;
    deliver();
  }
}
