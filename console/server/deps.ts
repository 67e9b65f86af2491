/**
 * What the console's server works on: ports, filled by whoever starts it. The `occurrences console` command fills
 * them from the CLI's target (the table, the schedule group, the worker queues, the registry and the bucket it
 * resolved); the tests fill them with in-memory fakes. The server itself creates no AWS client, so it imports no
 * CLI code and needs no credentials of its own.
 */

import type { Readable } from 'node:stream';
import type { DeployedJob } from '../../functions/protocol/job-control';
import type { Occurrence, OccurrenceKey } from '../../functions/protocol/occurrence';
import type {
  CancellableStore,
  Clock,
  JobStateStore,
  OccurrenceIndex,
  OccurrenceRecorder,
  ReopenableStore,
  ScheduleSwitch,
  WorkQueue,
} from '../../functions/protocol/ports';
import type { ScheduleOperations } from '../../operations/schedules';
import type { ReadMeter } from './read-units';

/** The deployed jobs: one schedule per job in the stack's schedule group (the CLI's JobCatalogue fits). */
export interface ConsoleJobCatalogue {
  /** The ids of every deployed job, sorted. */
  jobIds(): Promise<string[]>;
  /** The job whose schedule is named `jobId`, or undefined when there is none. */
  job(jobId: string): Promise<DeployedJob | undefined>;
  /**
   * The ids of the jobs whose schedule is DISABLED, as ListSchedules filtered by state lists them (one call per 100 of
   * them, no GetSchedule, however many are enabled): where the attention view finds the paused jobs. Absent: none.
   */
  disabledJobIds?(): Promise<string[]>;
}

/** A range of one series' rows, `from <= scheduledTime < to`, newest first, at most `limit` rows. */
export interface SeriesRange {
  readonly from: string;
  readonly to: string;
  readonly limit: number;
}

/**
 * The reads the pages make of the occurrence table. Each is one key-range Query or one GetItem on the table's key:
 * never a Scan, never the status index.
 */
export interface ConsoleOccurrenceReads {
  /**
   * A series' rows in the range, newest first: only the attributes a timeline bar and the jobs page's history strip
   * need (timeline.ts, TIMELINE_ATTRIBUTES), so a page of a thousand long runs does not carry their checkpoints.
   */
  newestFirst(series: string, range: SeriesRange): Promise<Occurrence[]>;
  /** One row with every attribute, as stored; undefined when there is none. */
  get(key: OccurrenceKey): Promise<Readonly<Record<string, unknown>> | undefined>;
}

/** A committed report's bytes, streamed from where it is kept. */
export interface ReportObject {
  readonly body: Readable | ReadableStream<Uint8Array>;
  readonly contentType?: string;
  readonly contentLength?: number;
}

/** Reads committed reports (S3 GetObject on the stack's report bucket). */
export interface ReportReader {
  /** The object at `key`, or undefined when there is none. */
  open(key: string): Promise<ReportObject | undefined>;
}

/** One line of the audit trail: an action, who asked, what they asked and what came of it. */
export interface AuditLine {
  /** When the action ended, ISO-8601 UTC. */
  readonly at: string;
  readonly by: string;
  readonly action: string;
  readonly request: unknown;
  /** The library function's outcome, or `error: <message>`. */
  readonly outcome: string;
}

/** The attention view's reads of the status index (attention.ts; functions/aws/occurrence-reader.ts has them). */
export type AttentionIndex = Pick<OccurrenceIndex, 'shardPages' | 'readRows'>;

/** Everything the console's server works on. */
export interface ConsoleDeps {
  /** What it is connected to, for the header: `table X at http://127.0.0.1:5000`. */
  readonly where: string;
  /** Who the actions are recorded as: `<os user> via console (<caller ARN>)`, at most 256 characters. */
  readonly operator: string;
  readonly clock: Clock;
  /** The deployed jobs. */
  readonly jobs: ConsoleJobCatalogue;
  /** The job-state rows (pause, failures in a row), read and written with compare-and-swap. */
  readonly states: JobStateStore;
  /** The pages' reads of the occurrence table. */
  readonly occurrences: ConsoleOccurrenceReads;
  /** What the actions write with: the trigger's insert (run, backfill, resume's catch-up) and a retry's reopen. */
  readonly store: OccurrenceRecorder & ReopenableStore & CancellableStore;
  /** Each worker's job queue, by worker id; absent in read-only mode (nothing is enqueued). */
  readonly queues?: ReadonlyMap<string, WorkQueue>;
  /** Turns a job's schedule off and on (pause, resume); absent in read-only mode. */
  readonly schedules?: ScheduleSwitch;
  /** The run-time schedules' registry, when the stack has one: lists a job's schedules, pauses and resumes one. */
  readonly registry?: ScheduleOperations;
  /** The report bucket, when known: the occurrence page's download link. */
  readonly reports?: ReportReader;
  /** The status index, for the attention view (attention.ts); absent: GET /api/attention answers 404. */
  readonly index?: AttentionIndex;
  /** Counts the DynamoDB read units each answer consumed; absent: every answer says 0. */
  readonly meter?: ReadMeter;
  /** Where each action's audit line goes (the command prints it on stdout). */
  readonly audit: (line: AuditLine) => void;
}
