/**
 * Who an operator is, as every operator write records it (`by` of a retry, a cancel, a bulk run, a pause, a resume,
 * a run now, a backfill; the console's actions): one resolver for the CLI, the console and the library.
 *
 * `<os user>@<host> (<STS caller ARN>)`: the OS user names the person (a shared role names only the role), the ARN
 * the AWS principal that made the write (what CloudTrail shows for it). STS GetCallerIdentity is asked once per
 * process; when it fails (no credentials, no network) the OS user alone is recorded, and the caller is warned. An
 * explicit `--by` (or `by`) overrides the whole string.
 */
import { hostname, userInfo } from 'node:os';
import { GetCallerIdentityCommand, STSClient, type STSClientConfig } from '@aws-sdk/client-sts';
import { MAX_BY_CHARS } from '../functions/protocol/job-control';

/** The parts of an operator's identity. */
export interface OperatorIdentity {
  /** The OS user name (`USER`, `LOGNAME`, `USERNAME`, or the account's name). */
  readonly user: string;
  /** The machine's host name. */
  readonly host: string;
  /** The AWS principal's ARN (STS GetCallerIdentity), when it could be had. */
  readonly callerArn?: string;
}

/** Where resolveOperatorIdentity reads the identity from; every field has the real world's default. */
export interface OperatorIdentitySources {
  /** The environment the OS user name is read from. @defaultValue `process.env` */
  readonly env?: NodeJS.ProcessEnv;
  /** The caller's ARN; undefined or a rejection when it cannot be had. @defaultValue none: the OS user alone */
  readonly callerArn?: () => Promise<string | undefined>;
  /** Told when the ARN could not be had. @defaultValue nothing */
  readonly warn?: (text: string) => void;
}

/** What the caller is told when STS GetCallerIdentity fails. */
export const NO_AWS_IDENTITY_WARNING =
  'warning: no AWS identity (STS GetCallerIdentity failed): actions are recorded by the OS user alone';

/** The OS user and host, read locally and at once. */
export function osIdentity(env: NodeJS.ProcessEnv = process.env): OperatorIdentity {
  let user = env.USER || env.LOGNAME || env.USERNAME;
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  return { user, host: hostname() };
}

/**
 * The operator's identity: the OS user and host, and the caller's ARN when `callerArn` gives one (a failure warns
 * through `warn` and leaves it out).
 *
 * @example
 * ```ts
 * const identity = await resolveOperatorIdentity({ callerArn: () => stsCallerArn(), warn: console.warn });
 * await pauseJob(ops, 'weekly-export', { note: 'migration', by: operatorName(identity) });
 * ```
 */
export async function resolveOperatorIdentity(sources: OperatorIdentitySources = {}): Promise<OperatorIdentity> {
  const local = osIdentity(sources.env);
  if (sources.callerArn === undefined) return local;
  const arn = await sources.callerArn().catch(() => undefined);
  if (arn === undefined) {
    sources.warn?.(NO_AWS_IDENTITY_WARNING);
    return local;
  }
  return { ...local, callerArn: arn };
}

/** `alice@bastion-1 (arn:aws:sts::123456789012:assumed-role/Ops/alice)`, at most MAX_BY_CHARS characters. */
export function operatorName(identity: OperatorIdentity): string {
  const arn = identity.callerArn === undefined ? '' : ` (${identity.callerArn})`;
  return `${identity.user}@${identity.host}${arn}`.slice(0, MAX_BY_CHARS);
}

/** The console's form: `alice via console (<caller ARN>)`, at most MAX_BY_CHARS characters. */
export function consoleOperatorName(identity: OperatorIdentity): string {
  const arn = identity.callerArn === undefined ? '' : ` (${identity.callerArn})`;
  return `${identity.user} via console${arn}`.slice(0, MAX_BY_CHARS);
}

/**
 * The caller's ARN from STS GetCallerIdentity, with `config`'s region, credentials and endpoint (the emulator
 * answers it too); undefined when STS gives none. Rejects when the call fails.
 */
export async function stsCallerArn(config: STSClientConfig = {}): Promise<string | undefined> {
  const sts = new STSClient(config);
  try {
    return (await sts.send(new GetCallerIdentityCommand({}))).Arn;
  } finally {
    sts.destroy();
  }
}

/**
 * A resolver that asks once and then answers from memory: what a process (the CLI, a tool built on the operations)
 * keeps, so that a bulk run of a thousand rows makes one STS call.
 */
export function memoizedOperator(sources: OperatorIdentitySources): () => Promise<OperatorIdentity> {
  let identity: Promise<OperatorIdentity> | undefined;
  return () => {
    identity ??= resolveOperatorIdentity(sources);
    return identity;
  };
}
