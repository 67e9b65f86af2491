/**
 * JobProps (job-props.ts) translated into the job configuration that job-config.ts validates (seconds, strings), and
 * the validation's problems named by the properties' own names: `addJob(weekly-export).timeout`, never the name a
 * setting has inside the functions.
 */
import { Duration, Token } from 'aws-cdk-lib';
import type { ScheduleExpression, TimeWindow } from 'aws-cdk-lib/aws-scheduler';
import { quoteValue } from '../functions/protocol/quote-value';
import type { ScheduledJobConfig } from './job-config';
import type { JobOptions } from './job-props';

type Unit = 'seconds' | 'minutes' | 'days';

/** A property that holds a Duration, and the setting inside the functions it becomes. */
interface DurationField {
  /** The property's path in JobProps. */
  readonly prop: string;
  /** The setting's path in the job configuration. */
  readonly setting: string;
  readonly unit: Unit;
}

const DURATION_FIELDS: readonly DurationField[] = [
  { prop: 'timeout', setting: 'timeoutSeconds', unit: 'seconds' },
  { prop: 'leaseDuration', setting: 'leaseSeconds', unit: 'seconds' },
  { prop: 'heartbeatInterval', setting: 'heartbeatSeconds', unit: 'seconds' },
  { prop: 'leaseSafetyMargin', setting: 'leaseSafetyMarginSeconds', unit: 'seconds' },
  { prop: 'retention', setting: 'retentionDays', unit: 'days' },
  { prop: 'catchupWindow', setting: 'catchupWindowSeconds', unit: 'seconds' },
  { prop: 'maxRunTime', setting: 'maxRunSeconds', unit: 'seconds' },
  { prop: 'retry.baseDelay', setting: 'retry.baseDelaySeconds', unit: 'seconds' },
  { prop: 'retry.maxDelay', setting: 'retry.maxDelaySeconds', unit: 'seconds' },
  { prop: 'retry.deadline', setting: 'retry.deadlineSeconds', unit: 'seconds' },
  { prop: 'schedulerRetry.maxEventAge', setting: 'schedulerRetry.maximumEventAgeSeconds', unit: 'seconds' },
  { prop: 'timeWindow', setting: 'flexibleWindowMinutes', unit: 'minutes' },
  { prop: 'lateAfter', setting: 'lateAfterSeconds', unit: 'seconds' },
];

/** The properties whose value passes unchanged, under another name inside. */
const RENAMED_FIELDS: Readonly<Record<string, string>> = {
  'schedulerRetry.maximumRetryAttempts': 'schedulerRetry.retryAttempts',
  timeZone: 'schedule.timeZone',
};

const JOB_OPTION_KEYS = [
  'schedule',
  'runtimeSchedules',
  'description',
  'enabled',
  'timeWindow',
  'schedulerRetry',
  'timeout',
  'leaseDuration',
  'heartbeatInterval',
  'leaseSafetyMargin',
  'retention',
  'retry',
  'overlap',
  'catchupWindow',
  'pauseAfterFailures',
  'maxRunTime',
  'jobMetrics',
  'lateAfter',
  'maxConcurrency',
  'fairnessKey',
];
const JOB_PROPS_KEYS = [...JOB_OPTION_KEYS, 'entry', 'worker', 'workerOptions'];
const RETRY_KEYS = ['maxAttempts', 'baseDelay', 'maxDelay', 'deadline', 'jitter'];
const SCHEDULER_RETRY_KEYS = ['retryAttempts', 'maxEventAge'];

/** A job's properties translated, or the problems that keep them from being translated. */
export type TranslatedJob =
  | { readonly config: ScheduledJobConfig; readonly problems?: undefined }
  | { readonly config?: undefined; readonly problems: readonly string[] };

/**
 * The job configuration of `props` (seconds and strings, as job-config.ts validates it), or the problems of the
 * properties' types: a bare number where a Duration belongs, an unknown property, a schedule that is not a
 * ScheduleExpression. The values themselves are validated by job-config.ts; its problems go through
 * `publicProblems`.
 */
export function jobConfigOf(jobId: string, props: JobOptions, where: string): TranslatedJob {
  if (typeof props !== 'object' || props === null)
    return { problems: [`${where}: the job's properties must be an object, got ${quoteValue(props)}`] };
  const problems = [
    ...unknownKeys(props, JOB_PROPS_KEYS, where),
    ...unknownKeys(props.retry, RETRY_KEYS, `${where}.retry`),
    ...unknownKeys(props.schedulerRetry, SCHEDULER_RETRY_KEYS, `${where}.schedulerRetry`),
  ];
  const seconds = (prop: string, value: Duration | undefined, unit: Unit = 'seconds') => {
    const amount = durationAmount(value, unit);
    if (typeof amount === 'string') problems.push(`${where}.${prop}: ${amount}`);
    return typeof amount === 'number' ? amount : undefined;
  };
  // No schedule is a job that takes its schedules at run time, or a problem job-config.ts names (exactly one of the two).
  const schedule = props.schedule === undefined ? undefined : scheduleParts(props.schedule);
  if (typeof schedule === 'string') problems.push(`${where}.schedule: ${schedule}`);
  const retry = props.retry ?? {};
  const schedulerRetry = props.schedulerRetry ?? {};
  const config = withoutUndefined({
    id: jobId,
    schedule: typeof schedule === 'string' ? undefined : schedule?.expression,
    timeZone: typeof schedule === 'string' ? undefined : schedule?.timeZone,
    runtimeSchedules: props.runtimeSchedules,
    description: props.description,
    enabled: props.enabled,
    flexibleWindowMinutes: flexibleWindowMinutes(props.timeWindow, where, problems),
    schedulerRetry: isObject(props.schedulerRetry)
      ? withoutUndefined({
          maximumRetryAttempts: schedulerRetry.retryAttempts,
          maximumEventAgeSeconds: seconds('schedulerRetry.maxEventAge', schedulerRetry.maxEventAge),
        })
      : props.schedulerRetry,
    timeoutSeconds: seconds('timeout', props.timeout),
    leaseSeconds: seconds('leaseDuration', props.leaseDuration),
    heartbeatSeconds: seconds('heartbeatInterval', props.heartbeatInterval),
    leaseSafetyMarginSeconds: seconds('leaseSafetyMargin', props.leaseSafetyMargin),
    retentionDays: seconds('retention', props.retention, 'days'),
    retry: isObject(props.retry)
      ? withoutUndefined({
          maxAttempts: retry.maxAttempts,
          baseDelaySeconds: seconds('retry.baseDelay', retry.baseDelay),
          maxDelaySeconds: seconds('retry.maxDelay', retry.maxDelay),
          deadlineSeconds: seconds('retry.deadline', retry.deadline),
          jitter: retry.jitter,
        })
      : props.retry,
    overlap: props.overlap,
    catchupWindowSeconds: seconds('catchupWindow', props.catchupWindow),
    pauseAfterFailures: props.pauseAfterFailures,
    jobMetrics: props.jobMetrics,
    maxRunSeconds: seconds('maxRunTime', props.maxRunTime),
    lateAfterSeconds: seconds('lateAfter', props.lateAfter),
    maxConcurrency: props.maxConcurrency,
    fairnessKey: props.fairnessKey,
  });
  if (problems.length > 0) return { problems };
  return { config: config as unknown as ScheduledJobConfig };
}

/**
 * The validation's problems under the properties' own names: `addJob(x).timeoutSeconds: must be a whole number from
 * 1 to 870, got 900` becomes `addJob(x).timeout: must be a whole number of seconds from 1 to 870, got 900`, and a
 * setting named inside a message (`2 x heartbeatSeconds (40)`) is named as its property (`heartbeatInterval (40 s)`).
 */
export function publicProblems(problems: readonly string[], where: string): string[] {
  return problems.map((problem) => {
    const colon = problem.indexOf(': ');
    if (!problem.startsWith(`${where}.`) || colon < 0) return renameInText(problem);
    const path = problem.slice(where.length + 1, colon);
    let message = problem.slice(colon + 2);
    const field = DURATION_FIELDS.find((f) => f.setting === path);
    if (field !== undefined)
      message = message.replace(/\ba (whole )?number from\b/, `a $1number of ${field.unit} from`);
    const prop = field?.prop ?? RENAMED_FIELDS[path] ?? path;
    return `${where}.${prop}: ${renameInText(message)}`;
  });
}

/** Settings named in the text of a message, as their properties, with a value in parentheses given its unit. */
function renameInText(text: string): string {
  let renamed = text;
  for (const field of DURATION_FIELDS) {
    const name = field.setting.split('.').pop() as string;
    const prop = field.prop.split('.').pop() as string;
    const unit = field.unit === 'seconds' ? 's' : field.unit === 'minutes' ? 'min' : 'days';
    renamed = renamed
      .replace(new RegExp(`\\b${name} \\((\\d+(?:\\.\\d+)?)\\)`, 'g'), `${prop} ($1 ${unit})`)
      .replace(new RegExp(`\\b${name}\\b`, 'g'), prop);
  }
  return renamed;
}

/** A Duration as a number of `unit`s (fractions kept, for the validation to name), or what is wrong with it. */
function durationAmount(value: unknown, unit: Unit): number | string | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Duration)) {
    const example = unit === 'days' ? 'Duration.days(30)' : 'Duration.minutes(5)';
    return `must be a Duration such as ${example}, got ${quoteValue(value)}`;
  }
  const amount =
    unit === 'days'
      ? value.toDays({ integral: false })
      : unit === 'minutes'
        ? value.toMinutes({ integral: false })
        : value.toSeconds({ integral: false });
  if (Token.isUnresolved(amount))
    return 'must be a Duration known at synth, not a token: the worker and the schedule are built from it';
  return amount;
}

/** The expression and time zone of a ScheduleExpression, or what is wrong with the value. */
function scheduleParts(value: unknown): { expression: string; timeZone?: string } | string {
  const given = value as Partial<ScheduleExpression> | undefined;
  if (typeof given !== 'object' || given === null || typeof given.expressionString !== 'string')
    return `must be a ScheduleExpression such as ScheduleExpression.cron({ hour: '6', minute: '0' }), got ${quoteValue(value)}`;
  if (Token.isUnresolved(given.expressionString))
    return 'must be known at synth, not a token: the trigger and the CLI read the expression';
  return { expression: given.expressionString, timeZone: given.timeZone?.timezoneName };
}

/** A TimeWindow as the flexible window's minutes (0 when off), or undefined with a problem. */
function flexibleWindowMinutes(window: unknown, where: string, problems: string[]): number | undefined {
  if (window === undefined) return undefined;
  const given = window as Partial<TimeWindow>;
  if (typeof window !== 'object' || window === null || (given.mode !== 'OFF' && given.mode !== 'FLEXIBLE')) {
    problems.push(
      `${where}.timeWindow: must be a TimeWindow such as TimeWindow.flexible(Duration.minutes(15)), got ${quoteValue(window)}`,
    );
    return undefined;
  }
  if (given.mode === 'OFF') return 0;
  const minutes = durationAmount(given.maxWindow, 'minutes');
  if (typeof minutes === 'string') problems.push(`${where}.timeWindow: ${minutes}`);
  return typeof minutes === 'number' ? minutes : undefined;
}

/** The properties of 0.1.0 that 1.0 renamed, so that an app being upgraded is told the new name. */
const RENAMED_IN_1_0: Readonly<Record<string, string>> = {
  id: "the job id is addJob's first argument",
  timeZone: "the time zone is the ScheduleExpression's (ScheduleExpression.cron({ ..., timeZone }))",
  ...Object.fromEntries(
    DURATION_FIELDS.filter((f) => !f.prop.includes('.')).map((f) => [f.setting, `renamed to ${f.prop} (a Duration)`]),
  ),
  flexibleWindowMinutes: 'renamed to timeWindow (TimeWindow.flexible(Duration.minutes(n)))',
  maximumRetryAttempts: 'renamed to retryAttempts',
  maximumEventAgeSeconds: 'renamed to maxEventAge (a Duration)',
  baseDelaySeconds: 'renamed to baseDelay (a Duration)',
  maxDelaySeconds: 'renamed to maxDelay (a Duration)',
  deadlineSeconds: 'renamed to deadline (a Duration)',
};

/** Each property of `value` not in `known`, as a problem; nothing for a value that is not an object. */
function unknownKeys(value: unknown, known: readonly string[], where: string): string[] {
  if (!isObject(value)) return [];
  return Object.keys(value)
    .filter((key) => !known.includes(key))
    .map((key) =>
      Object.hasOwn(RENAMED_IN_1_0, key)
        ? `${where}.${key}: unknown property; ${RENAMED_IN_1_0[key]} (docs/migration.md)`
        : `${where}.${key}: unknown property (known: ${known.join(', ')})`,
    );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function withoutUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
