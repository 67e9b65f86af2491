/**
 * What `occurrences schedules ...` works on: the registry table and the stack's schedule group (where each job's
 * template schedule is), from `--registry-table` and `--schedule-group`, or else from the stack's outputs
 * `<prefix>ScheduleRegistryTableName` and `<prefix>ScheduleGroupName` (`--stack`, `--output-prefix`), as target.ts
 * finds the occurrence table. The occurrence table is not needed: the schedules are rows of the registry.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { asDependencyError } from '../../../functions/aws/classify-error';
import { STACK_OUTPUTS } from '../../../lib/stack-outputs';
import { connectScheduleOperations, type ScheduleOperations } from '../../../operations/schedules';
import { UsageError } from '../errors';
import { type ClientConfig, clientConfig, DEFAULT_STACK, outputsOf } from '../target';

/** The stack output that names the registry table (lib/ adds it when a job takes schedules at run time). */
export const REGISTRY_TABLE_OUTPUT = 'ScheduleRegistryTableName';

export interface ScheduleTargetOptions {
  /** Given by --stack (the default stack counts as not given). */
  readonly stack?: string;
  readonly outputPrefix?: string;
  readonly registryTable?: string;
  readonly scheduleGroup?: string;
  /** The occurrences table (--table or the stack output): `resume` then also lifts a pause after failures. */
  readonly occurrenceTable?: string;
  readonly endpoint?: string;
  readonly region?: string;
}

/** The schedule operations of one deployed ScheduledJobs, and where they are, for messages. */
export interface ScheduleTarget {
  readonly ops: ScheduleOperations;
  readonly where: string;
  /** The endpoint, region and credentials the clients were made with (STS asks with them: the operator's ARN). */
  readonly clientConfig?: ClientConfig;
}

/** What the schedules commands take from the program's dependencies beyond CliDeps: tests pass their own. */
export interface ScheduleCliDeps {
  readonly connectSchedules?: (options: ScheduleTargetOptions) => Promise<ScheduleTarget>;
  /** Whether stderr is a terminal (a progress bar) or not (plain progress lines). @defaultValue process.stderr.isTTY */
  readonly interactive?: boolean;
}

export async function resolveScheduleTarget(
  options: ScheduleTargetOptions,
  env: NodeJS.ProcessEnv,
): Promise<ScheduleTarget> {
  const config = clientConfig(options, env);
  let registryTable = options.registryTable;
  let scheduleGroup = options.scheduleGroup;
  let occurrenceTable = options.occurrenceTable;
  const stack = options.stack ?? DEFAULT_STACK;
  const prefix = options.outputPrefix ?? '';
  if (registryTable === undefined || scheduleGroup === undefined) {
    const values = await stackOutputValues(new CloudFormationClient(config), stack, prefix);
    registryTable ??= values[`${prefix}${REGISTRY_TABLE_OUTPUT}`];
    scheduleGroup ??= values[`${prefix}${STACK_OUTPUTS.scheduleGroup}`];
    occurrenceTable ??= values[`${prefix}${STACK_OUTPUTS.table}`];
    if (registryTable === undefined) {
      throw new UsageError(
        `the schedule registry table is unknown: stack ${stack} has no output ${prefix}${REGISTRY_TABLE_OUTPUT} ` +
          '(no job of it takes schedules at run time, or another --output-prefix); pass --registry-table or --stack',
      );
    }
    if (scheduleGroup === undefined) {
      throw new UsageError(
        `the jobs' schedule group is unknown: stack ${stack} has no output ${prefix}${STACK_OUTPUTS.scheduleGroup}; ` +
          'pass --schedule-group or --stack',
      );
    }
  }
  const ops = connectScheduleOperations({
    registryTableName: registryTable,
    scheduleGroupName: scheduleGroup,
    ...(occurrenceTable === undefined ? {} : { occurrenceTableName: occurrenceTable }),
    clients: { dynamoDb: new DynamoDBClient(config), scheduler: new SchedulerClient(config) },
  });
  const at = config.endpoint === undefined ? '' : ` at ${config.endpoint}`;
  return { ops, where: `registry ${registryTable}${at}`, clientConfig: config };
}

async function stackOutputValues(
  client: CloudFormationClient,
  stack: string,
  prefix: string,
): Promise<Readonly<Record<string, string>>> {
  try {
    const out = await client.send(new DescribeStacksCommand({ StackName: stack }));
    return outputsOf(out.Stacks?.[0]?.Outputs ?? [], prefix).values;
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'ValidationError' && /does not exist/.test(String((error as Error).message))) {
      throw new UsageError(
        `stack ${stack} does not exist in this account and region; pass --stack <name>, or --registry-table and --schedule-group`,
      );
    }
    throw asDependencyError(`read the outputs of stack ${stack}`, error);
  } finally {
    client.destroy();
  }
}
