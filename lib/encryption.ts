/**
 * The stack's customer-managed key (ScheduledJobsProps.encryptionKey): which resources it encrypts, the key actions
 * each principal gets where it reads or writes their data, and what the key's own policy must let AWS services do.
 *
 * The key is set once on the ScheduledJobs and found from any scope inside it (encryptionKeyOf), so that every
 * queue, table, topic and log group built under it takes the key without each builder being handed it: a queue
 * added later cannot forget it.
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { IConstruct } from 'constructs';
import { quoteValue } from '../functions/protocol/quote-value';

const keysByScope = new WeakMap<IConstruct, kms.IKey>();
/** The key statement of each principal, by key: grantKeyUse adds to it instead of repeating it. */
const grantedStatements = new WeakMap<iam.IPrincipal, Map<kms.IKey, iam.PolicyStatement>>();

/**
 * What a principal does with data under the key. `read`: Decrypt (a GetItem, a GetObject, a received message, a
 * stream record). `write`: also GenerateDataKey (a PutObject under SSE-KMS, a sent message, a published
 * announcement) and Encrypt. DescribeKey in both: DynamoDB checks the key with the caller's permissions. No wildcard
 * actions, so no cdk-nag IAM5 finding to acknowledge.
 */
export type KeyUse = 'read' | 'write';
export const KEY_ACTIONS: Readonly<Record<KeyUse, readonly string[]>> = {
  read: ['kms:Decrypt', 'kms:DescribeKey'],
  write: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
};

/** The problems of a given `encryptionKey`: not a key, or an alias (IAM grants on an alias ARN authorize nothing). */
export function encryptionKeyProblems(where: string, key: unknown): string[] {
  if (key === undefined) return [];
  const candidate = key as Partial<kms.IKey & kms.IAlias>;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.keyArn !== 'string')
    return [`${where}: must be a kms.IKey (new kms.Key(...) or kms.Key.fromKeyArn(...)), got ${quoteValue(key)}`];
  if (typeof candidate.aliasName === 'string')
    return [
      `${where}: give the key itself (kms.Key.fromKeyArn), not the alias ${quoteValue(candidate.aliasName)}: ` +
        "the stack's grants name the key's ARN, and a grant on an alias's ARN does not allow using the key",
    ];
  return [];
}

/**
 * Makes `key` the key of everything built under `scope` from now on, and, for a key of the app's own (a kms.Key),
 * adds to its policy what CloudWatch Logs and CloudWatch alarms need (docs/platform.md has the statements for a key
 * imported by ARN, whose policy the app cannot change).
 */
export function useEncryptionKey(scope: IConstruct, key: kms.IKey): void {
  keysByScope.set(scope, key);
  for (const statement of servicePolicyStatements(scope)) key.addToResourcePolicy(statement);
}

/** The key of the nearest ScheduledJobs around `scope`, if it was given one. */
export function encryptionKeyOf(scope: IConstruct): kms.IKey | undefined {
  const scopes = scope.node.scopes;
  for (let i = scopes.length - 1; i >= 0; i--) {
    const key = keysByScope.get(scopes[i]);
    if (key !== undefined) return key;
  }
  return undefined;
}

/**
 * The key policy statements a ScheduledJobs needs beyond the account's IAM policies: CloudWatch Logs encrypts the
 * functions' log groups (only its log groups in this account and region, by the encryption context), and CloudWatch
 * publishes alarms to the encrypted alarm topic. SNS's delivery to the encrypted ReportReadyQueue is added by the
 * subscription itself (aws-sns-subscriptions), scoped to the topic.
 */
export function servicePolicyStatements(scope: IConstruct): iam.PolicyStatement[] {
  const stack = Stack.of(scope);
  return [
    new iam.PolicyStatement({
      sid: 'ScheduledJobsLogGroups',
      principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
      actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
      resources: ['*'],
      conditions: {
        ArnLike: {
          'kms:EncryptionContext:aws:logs:arn': `arn:${stack.partition}:logs:${stack.region}:${stack.account}:log-group:*`,
        },
      },
    }),
    new iam.PolicyStatement({
      sid: 'ScheduledJobsAlarmTopic',
      principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
      conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
    }),
  ];
}

/**
 * Grants `grantee` the key's actions for `use`, once per principal and key: a second call adds the write actions to
 * the same statement rather than a statement of its own. Nothing without a key (the AWS-managed default).
 */
export function grantKeyUse(grantee: iam.IGrantable, key: kms.IKey | undefined, use: KeyUse): iam.Grant {
  if (key === undefined) return iam.Grant.drop(grantee, 'no customer-managed key');
  const principal = grantee.grantPrincipal;
  const byKey = grantedStatements.get(principal) ?? new Map<kms.IKey, iam.PolicyStatement>();
  grantedStatements.set(principal, byKey);
  const granted = byKey.get(key);
  if (granted !== undefined) {
    granted.addActions(...KEY_ACTIONS[use].filter((action) => !granted.actions.includes(action)));
    return iam.Grant.drop(grantee, 'the key is granted already: its statement has the actions now');
  }
  const grant = iam.Grant.addToPrincipal({ grantee, actions: [...KEY_ACTIONS[use]], resourceArns: [key.keyArn] });
  const [statement] = grant.principalStatements;
  if (statement !== undefined) byKey.set(key, statement);
  return grant;
}
