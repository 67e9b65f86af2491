/**
 * How the simulation names and fails SDK calls: the operation of a command, a readable label for the trace (which
 * protocol step an UpdateItem is), and the errors the SDK would raise.
 */
import type { CallFault } from './plan';

/** An SDK command as the simulation reads it: its class names the operation, its input says what it does. */
export interface SdkCommand {
  readonly constructor: { readonly name: string };
  readonly input: CommandInput;
}

/** The fields of a command's input that the simulation reads (a table key is an object, an S3 key a string). */
export interface CommandInput {
  readonly Key?: unknown;
  readonly UpdateExpression?: string;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
  readonly VisibilityTimeout?: number;
}

const OPERATIONS: Record<string, string> = {
  PutCommand: 'PutItem',
  UpdateCommand: 'UpdateItem',
  GetCommand: 'GetItem',
  QueryCommand: 'Query',
  PutObjectCommand: 'PutObject',
  HeadObjectCommand: 'HeadObject',
  SendMessageCommand: 'SendMessage',
  ChangeMessageVisibilityCommand: 'ChangeMessageVisibility',
  PublishCommand: 'Publish',
  BatchGetCommand: 'BatchGetItem',
  CreateScheduleCommand: 'CreateSchedule',
  UpdateScheduleCommand: 'UpdateSchedule',
  DeleteScheduleCommand: 'DeleteSchedule',
  GetScheduleCommand: 'GetSchedule',
  ListSchedulesCommand: 'ListSchedules',
  DeleteCommand: 'DeleteItem',
};

export const TABLE_OPERATIONS = new Set(['PutItem', 'UpdateItem', 'GetItem', 'Query', 'BatchGetItem', 'DeleteItem']);

export function operationOf(command: SdkCommand): string {
  return OPERATIONS[command.constructor.name] ?? command.constructor.name;
}

/** A short, readable name for a call in the trace: which protocol step it is. */
export function describeCall(op: string, input: CommandInput): string {
  if (op !== 'UpdateItem') {
    if (op === 'ChangeMessageVisibility') return `${op} ${input.VisibilityTimeout} s`;
    return op;
  }
  const update = String(input.UpdateExpression);
  const values = input.ExpressionAttributeValues ?? {};
  const lease = values[':leaseId'] as string | undefined;
  let step: string;
  if (update.includes('#attempt = #attempt + :one')) step = 'claim';
  else if (update.includes('#committingLease')) step = 'commitPoint';
  else if (values[':cancelled'] !== undefined) step = 'cancel';
  else if (update.includes('#notifiedAt')) step = 'markNotified';
  else if (values[':succeeded'] !== undefined) step = lease ? 'complete' : 'completeUnheld';
  else if (values[':failed'] !== undefined) step = lease ? 'fail' : 'failUnheld';
  else if (values[':retryWait'] !== undefined && update.includes(':next')) step = 'release';
  else step = 'extend';
  return `UpdateItem ${step}${lease ? ` ${lease}` : ''}`;
}

export function describeFault(f: CallFault): string {
  if (f.kind === 'slow') return `slow +${f.ms} ms`;
  if (f.kind === 'pause-after') return `pause ${f.ms} ms after sending`;
  return f.kind;
}

export function transientError(op: string): Error {
  return Object.assign(new Error(`${op}: Service unavailable`), {
    name: 'ServiceUnavailable',
    $metadata: { httpStatusCode: 503 },
  });
}

/** A throttle the SDK's own retries did not get past (ThrottlingException: transient, by its name). */
export function throttledError(op: string): Error {
  return Object.assign(new Error(`${op}: Rate exceeded`), {
    name: 'ThrottlingException',
    $metadata: { httpStatusCode: 400 },
  });
}

export function timeoutError(op: string): Error {
  return Object.assign(new Error(`${op}: socket timed out after the request was sent`), { name: 'TimeoutError' });
}

/** What a call rejects with when the caller's AbortSignal aborts it. */
export function abortError(message: string): Error {
  return Object.assign(new Error(message), { name: 'AbortError' });
}
