/**
 * The role aws-scheduler-targets makes for the schedules' target (one per stack and target, in the stack's own scope,
 * outside the ScheduledJobs): what the platform options must reach on it too, since `PermissionsBoundary.of` and the
 * key's scope (lib/encryption.ts) reach only what is built under the ScheduledJobs.
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { IConstruct } from 'constructs';
import { grantKeyUse } from './encryption';

export interface SchedulerRoleOptions {
  /** Sends a failed invocation to the SchedulerDeadLetterQueue, encrypted with it. */
  readonly encryptionKey?: kms.IKey;
  readonly permissionsBoundary?: iam.IManagedPolicy;
}

/** The key's use and the boundary on the schedules' role, found by the ARN the schedule's target names. */
export function configureSchedulerRole(scope: IConstruct, roleArn: string, options: SchedulerRoleOptions): void {
  if (options.encryptionKey === undefined && options.permissionsBoundary === undefined) return;
  const role = Stack.of(scope)
    .node.findAll()
    .find((c): c is iam.Role => c instanceof iam.Role && c.roleArn === roleArn);
  if (role === undefined) throw new Error(`${scope.node.path}: no role of the stack has the ARN ${roleArn}`);
  grantKeyUse(role, options.encryptionKey, 'write');
  if (options.permissionsBoundary !== undefined) iam.PermissionsBoundary.of(role).apply(options.permissionsBoundary);
}
