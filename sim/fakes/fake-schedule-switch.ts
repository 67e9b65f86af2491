/**
 * EventBridge Scheduler's schedule state for the simulation (the ScheduleSwitch port the operator's pause and resume
 * and the worker's pause after failures use): it records every change, by whom and when (true time), and the world
 * asks it, at each fire time of the job, whether the schedule fires. Disabling a schedule stops its later fires; a
 * fire that already happened is in flight and still arrives (sim/world.ts).
 */
import type { ScheduleSwitch } from '../../functions/protocol/ports';

export type ScheduleState = 'ENABLED' | 'DISABLED';

/** One setState call as the service applied it. */
export interface ScheduleChange {
  readonly at: number;
  readonly who: string;
  readonly state: ScheduleState;
}

export class FakeScheduleSwitch implements ScheduleSwitch {
  private state: ScheduleState = 'ENABLED';
  /** Every call, in order, including those that set the state it already had (a no-op, as Scheduler's). */
  readonly changes: ScheduleChange[] = [];

  constructor(
    /** True time, and the name of the process calling. */
    private readonly now: () => number,
    private readonly caller: () => string,
  ) {}

  async setState(_jobId: string, state: ScheduleState): Promise<void> {
    this.state = state;
    this.changes.push({ at: this.now(), who: this.caller(), state });
  }

  get enabled(): boolean {
    return this.state === 'ENABLED';
  }
}
