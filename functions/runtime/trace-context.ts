/**
 * The X-Ray trace context of one occurrence, from the trigger through the queue to each worker attempt.
 *
 * Lambda sets `_X_AMZN_TRACE_ID` for each invocation (`Root=1-...;Parent=...;Sampled=0|1`), with active tracing or
 * without it (PassThrough: not sampled, but a trace id all the same). The trigger's SendMessage carries it as the
 * message's `AWSTraceHeader` system attribute (SqsWorkQueue), set explicitly: the SDK's recursion-detection middleware
 * also sends it as the `X-Amzn-Trace-Id` HTTP header inside Lambda, which SQS reads too, but the attribute is SQS's
 * documented field and overrides the header. Lambda's SQS event source hands it back on each record
 * (`attributes.AWSTraceHeader`), and X-Ray links the worker's trace to the trigger's (a batch has many parents:
 * linked, not parented). The worker writes the trigger's trace id on every log line of that record.
 */

/** The trace header of the current invocation, or undefined outside Lambda (tests, local runs). */
export function currentTraceHeader(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const header = env._X_AMZN_TRACE_ID;
  return header !== undefined && TRACE_HEADER.test(header) ? header : undefined;
}

/** `Root=1-5759e988-bd862e3fe1be46a994272793;Parent=...;Sampled=1`: a Root first, and no more than SQS takes. */
const TRACE_HEADER = /^Root=1-[0-9a-f]{8}-[0-9a-f]{24}(;[A-Za-z]+=[^;]*)*$/;

/** The trace id (`1-5759e988-bd862e3fe1be46a994272793`) of a trace header, or undefined when it has none. */
export function traceIdOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return /(?:^|;)Root=(1-[0-9a-f]{8}-[0-9a-f]{24})(?:;|$)/.exec(header)?.[1];
}
