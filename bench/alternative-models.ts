/**
 * How each alternative bills one run of a scheduled job, as one model that figure 3 (per million) and the monthly
 * bill both use: a count of billed units a run, and what they are. Models from the services' pricing pages, not
 * measurements; each is a floor (a retry, a wait or a second activity adds to it).
 */
export interface RunModel {
  /** Billed units a run, at least. */
  readonly unitsPerRun: number;
  readonly unit: string;
  readonly what: string;
}

/** Step Functions Standard bills every state transition; the execution's start is the first. */
export const STEP_FUNCTIONS_RUN: RunModel = {
  unitsPerRun: 4,
  unit: 'state transitions',
  what: "the execution's start, run the job's Lambda, write the report, publish",
};

/** Lambda durable functions bill every durable operation; starting the execution is one. */
export const DURABLE_FUNCTIONS_RUN: RunModel = {
  unitsPerRun: 4,
  unit: 'durable operations',
  what: "the execution's start, the run step, the report step, the announce step",
};

/** Temporal Cloud bills actions: a schedule's fire is 3 before any activity runs, the activity at least 1 more. */
export const TEMPORAL_RUN: RunModel = {
  unitsPerRun: 4,
  unit: 'actions',
  what: "3 for the schedule's fire before any activity (the schedule's action, the workflow's start, its first task), 1 for the activity",
};

/** "≥ 4 state transitions (the execution's start, ...)": the model in the words the tables print. */
export function describeRun(model: RunModel): string {
  return `≥ ${model.unitsPerRun} ${model.unit} a run (${model.what})`;
}
