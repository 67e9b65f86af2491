/**
 * The CDK side of schedules created at run time (docs/runtime-schedules.md): the schedule registry table, one per
 * ScheduledJobs and only once a job takes run-time schedules, and the grants on it and on a job's schedule group.
 *
 * The registry's rows are the source of truth; each row's Scheduler schedule, in its job's own group, is the
 * projection. So every grant here is two halves: the job's rows (DynamoDB, scoped by the leading key `jobId`) and
 * the job's group (Scheduler, scoped by the ARN `schedule/<group>/*`), plus the template it copies and the role its
 * target hands to Scheduler.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { REGISTRY_TABLE } from '../functions/protocol/schedule-registry';
import { encryptionKeyOf, grantKeyUse } from './encryption';
import type { KeyedJobSchedule } from './job-schedules';
import { tableEncryption } from './occurrence-storage';

/** The actions on one job's registry rows: read-modify-write with conditions, and its listing by key prefix. */
const ROW_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
];

/** What a manager of a job's schedules does in the job's group: CreateSchedule, and on ConflictException Update. */
const GROUP_ACTIONS = [
  'scheduler:CreateSchedule',
  'scheduler:UpdateSchedule',
  'scheduler:DeleteSchedule',
  'scheduler:GetSchedule',
];

/**
 * The registry table, by the names the store reads it with (REGISTRY_TABLE, functions/protocol/schedule-registry.ts):
 * PAY_PER_REQUEST, point-in-time recovery, the occurrence table's encryption and the removal policy of the
 * occurrence table (occurrence-storage.ts), since losing it loses every app-created schedule's definition. Both
 * indexes project ALL: the sweep re-projects a row and the audit compares whole rows, from the index alone.
 */
export function scheduleRegistryTable(scope: Construct, removalPolicy: RemovalPolicy): dynamodb.Table {
  const table = new dynamodb.Table(scope, 'ScheduleRegistryTable', {
    partitionKey: { name: REGISTRY_TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: REGISTRY_TABLE.sortKey, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: REGISTRY_TABLE.ttlAttribute,
    ...tableEncryption(encryptionKeyOf(scope)),
    removalPolicy,
  });
  for (const index of [REGISTRY_TABLE.syncIndex, REGISTRY_TABLE.auditIndex]) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
  }
  return table;
}

/** The ARN of one of the registry's indexes, by name: no `index/*`, which would reach any index added later. */
export function registryIndexArn(table: dynamodb.ITable, indexName: string): string {
  return `${table.tableArn}/index/${indexName}`;
}

/**
 * The ARN of every schedule in a group: what a grant on one job's run-time schedules is scoped to. Any partition,
 * region and account, as the reconciler's late check: an ARN with CloudFormation's pseudo parameters makes a cdk-nag
 * finding id that aws-cdk-lib 2.252 (the lowest peer) refuses to acknowledge ('::' twice), failing the user's synth.
 * Scheduler has no resource policies, so no other account's schedules are reachable all the same.
 */
export function groupSchedulesArn(groupName: string): string {
  return `arn:*:scheduler:*:*:schedule/${groupName}/*`;
}

/** What grantManageSchedules needs of one job: its id, the registry, and its schedules (KeyedJobSchedule). */
export interface KeyedJobGrantParts {
  readonly jobId: string;
  readonly registry: dynamodb.ITable;
  readonly schedules: KeyedJobSchedule;
}

/**
 * What an app's function needs to manage one job's run-time schedules (operations/schedules.ts), and nothing of any
 * other job:
 *
 * - its registry rows: ROW_ACTIONS on the table where the leading key (the partition key, `jobId`) is the job id;
 * - the audit index `byAuditBucket`, Query only, where the leading key (that index's partition key,
 *   `${jobId}#${bucket}`) starts with `${jobId}#`: a job id has no '#', so no other job's bucket matches;
 * - not the sync index `bySyncDue`: its partition key is a shard shared by every job's rows, so no condition can
 *   keep a Query there to one job; only the reconciler reads it, and the management API does not need it;
 * - Create/Update/Delete/GetSchedule on `schedule/<the job's group>/*`, GetSchedule on the job's template;
 * - ListSchedules on `*`: it has no resource-level permissions (Service Authorization Reference, EventBridge
 *   Scheduler); it shows names and states, not inputs, and the group a call lists is its GroupName parameter;
 * - iam:PassRole of the template's target role, to Scheduler only (CreateSchedule and UpdateSchedule pass it): the
 *   job's own role (KeyedTriggerTarget), which may invoke only the job's trigger alias.
 */
export function grantManageKeyedSchedules(grantee: iam.IGrantable, parts: KeyedJobGrantParts): iam.Grant {
  const { jobId, registry, schedules } = parts;
  const grants = [
    iam.Grant.addToPrincipal({
      grantee,
      actions: ROW_ACTIONS,
      resourceArns: [registry.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [jobId] } },
    }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:Query'],
      resourceArns: [registryIndexArn(registry, REGISTRY_TABLE.auditIndex.name)],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${jobId}#*`] } },
    }),
    iam.Grant.addToPrincipal({
      grantee,
      actions: GROUP_ACTIONS,
      resourceArns: [groupSchedulesArn(schedules.group.scheduleGroupName)],
    }),
    iam.Grant.addToPrincipal({ grantee, actions: ['scheduler:GetSchedule'], resourceArns: [schedules.scheduleArn] }),
    iam.Grant.addToPrincipal({ grantee, actions: ['scheduler:ListSchedules'], resourceArns: ['*'] }),
    grantPassRoleToScheduler(grantee, schedules.targetRoleArn),
    // Under a customer-managed key, the rows are read and written with it.
    grantKeyUse(grantee, registry.encryptionKey, 'write'),
  ];
  return grants.reduce((all, grant) => all.combine(grant));
}

/**
 * The reconciler's access to the whole registry (every job's rows, both indexes, its audit cursor row `#audit`):
 * the sweep reads `bySyncDue` and re-projects, the audit reads `byAuditBucket`, and both write the rows' sync marks
 * and remove tombstones. ListSchedules has no resource-level permissions. Added once, with the table.
 */
export function allowReconcileRegistry(fn: iam.IGrantable, registry: dynamodb.ITable): void {
  grantKeyUse(fn, registry.encryptionKey, 'write');
  fn.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'],
      resources: [registry.tableArn],
    }),
  );
  fn.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:Query'],
      resources: [REGISTRY_TABLE.syncIndex.name, REGISTRY_TABLE.auditIndex.name].map((name) =>
        registryIndexArn(registry, name),
      ),
    }),
  );
  fn.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['scheduler:ListSchedules'], resources: ['*'] }),
  );
}

/**
 * The reconciler's access to one job's run-time schedules, added as the job is: its group's schedules (re-project,
 * recreate, remove orphans), its template (what a projection copies) and the template's role (the job's own), to
 * Scheduler only.
 */
export function allowReconcileKeyedJob(fn: iam.IGrantable, schedules: KeyedJobSchedule): void {
  grantPassRoleToScheduler(fn, schedules.targetRoleArn);
  fn.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: [...GROUP_ACTIONS],
      resources: [groupSchedulesArn(schedules.group.scheduleGroupName)],
    }),
  );
  fn.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['scheduler:GetSchedule'], resources: [schedules.scheduleArn] }),
  );
}

/** iam:PassRole of the schedules' target role, only to Scheduler. */
export function grantPassRoleToScheduler(grantee: iam.IGrantable, roleArn: string): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['iam:PassRole'],
    resourceArns: [roleArn],
    conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
  });
}
