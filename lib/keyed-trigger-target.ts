/**
 * The Scheduler target of one job that takes its schedules at run time: the trust boundary's CDK half
 * (docs/design.md, "Who may start an occurrence"; the trigger's half is functions/protocol/runtime-schedule-guard.ts).
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { keyedAliasNameOf } from '../functions/protocol/runtime-schedule-guard';
import { TRIGGER_ASYNC_RETRY_ATTEMPTS } from '../functions/protocol/worker-limits';
import { encryptionKeyOf, grantKeyUse } from './encryption';

/**
 * What one run-time-schedule job's schedules invoke, so that IAM, not the event, says which job fired (docs/design.md,
 * "Who may start an occurrence"): the trigger's alias `job-<jobId>` (on $LATEST: no version to publish, the alias runs
 * the code the function runs), and a Scheduler role of the job's own that may invoke that alias and nothing else,
 * assumable by Scheduler only for schedules of the job's group. grantManageSchedules passes only this role; the
 * trigger refuses an event naming another job than its alias's (functions/protocol/runtime-schedule-guard.ts).
 */
export class KeyedTriggerTarget extends Construct {
  readonly alias: lambda.Alias;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: { trigger: lambda.IFunction; jobId: string; groupName: string }) {
    super(scope, id);
    this.alias = new lambda.Alias(this, 'Alias', {
      aliasName: keyedAliasNameOf(props.jobId),
      version: props.trigger.latestVersion,
      description: `The trigger, as the run-time schedules of job ${props.jobId} invoke it`,
      // An alias has its own asynchronous invocation settings: the function's would not apply.
      retryAttempts: TRIGGER_ASYNC_RETRY_ATTEMPTS,
    });
    const { account, region, partition } = Stack.of(this);
    this.role = new iam.Role(this, 'SchedulerRole', {
      description: `Scheduler's role for the run-time schedules of job ${props.jobId}: invokes only its trigger alias`,
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': account },
          ArnEquals: {
            'aws:SourceArn': `arn:${partition}:scheduler:${region}:${account}:schedule-group/${props.groupName}`,
          },
        },
      }),
    });
    // It sends a failed invocation to Scheduler's dead-letter queue, encrypted with the stack's key when it has one.
    grantKeyUse(this.role, encryptionKeyOf(this), 'write');
  }
}
