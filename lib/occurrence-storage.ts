/**
 * Where the state lives: the occurrence table (one row per occurrence, the single source of truth about progress)
 * and the report bucket (one write-once object per occurrence). Both are retained by default, so deleting the stack
 * keeps the history.
 *
 * Like the other pieces of ScheduledJobs, these build into the scope they are given rather than a scope of their
 * own: the logical IDs of the table and the bucket are part of the deployed stack's identity.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { REPORT_KEY_PREFIX } from '../functions/protocol/occurrence';
import { quoteValue } from '../functions/protocol/quote-value';
import { OCCURRENCE_TABLE } from '../functions/protocol/table-schema';
import { encryptionKeyOf } from './encryption';

export function occurrenceTable(scope: Construct, removalPolicy: RemovalPolicy): dynamodb.Table {
  const encryptionKey = encryptionKeyOf(scope);
  const table = new dynamodb.Table(scope, 'OccurrenceTable', {
    partitionKey: { name: OCCURRENCE_TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: OCCURRENCE_TABLE.sortKey, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: OCCURRENCE_TABLE.ttlAttribute,
    stream: dynamodb.StreamViewType[OCCURRENCE_TABLE.streamViewType],
    ...tableEncryption(encryptionKey),
    removalPolicy,
  });
  // Sharded and projecting only what a heartbeat leaves alone: see "The status index" in docs/design.md. A key
  // schema cannot change in place, and CloudFormation creates or deletes one index per update: this index has a
  // new name, and a stack that still has the old `byStatus` is upgraded in steps (docs/operating.md).
  table.addGlobalSecondaryIndex({
    indexName: OCCURRENCE_TABLE.statusIndex.name,
    partitionKey: { name: OCCURRENCE_TABLE.statusIndex.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: OCCURRENCE_TABLE.statusIndex.sortKey, type: dynamodb.AttributeType.STRING },
    projectionType: dynamodb.ProjectionType.INCLUDE,
    nonKeyAttributes: [...OCCURRENCE_TABLE.statusIndex.nonKeyAttributes],
  });
  return table;
}

/** The ScheduledJobs' key, its table encryption (CUSTOMER_MANAGED), or AWS-managed encryption without one. */
export function tableEncryption(
  encryptionKey: kms.IKey | undefined,
): Pick<dynamodb.TableProps, 'encryption' | 'encryptionKey'> {
  return encryptionKey === undefined
    ? { encryption: dynamodb.TableEncryption.AWS_MANAGED }
    : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey };
}

/** The ARN of the status index, for grants that query it. */
export function statusIndexArn(table: dynamodb.ITable): string {
  return `${table.tableArn}/index/${OCCURRENCE_TABLE.statusIndex.name}`;
}

/** The made report bucket's options (ScheduledJobsProps.reportRetention, versioned). */
export interface ReportBucketOptions {
  /** Reports expire this long after they were written; default never. */
  readonly retention?: Duration;
  /** S3 versioning; default off. */
  readonly versioned?: boolean;
}

/**
 * DynamoDB deletes an expired row within about two days of its TTL (docs: "typically within a few days"; measured
 * within 48 hours): a report outlives its row by that much more, so that the console never links a row to a report
 * that expired.
 */
export const ROW_DELETION_LAG_DAYS = 2;

export function reportBucket(
  scope: Construct,
  removalPolicy: RemovalPolicy,
  options: ReportBucketOptions = {},
): s3.Bucket {
  const encryptionKey = encryptionKeyOf(scope);
  const { retention, versioned } = options;
  return new s3.Bucket(scope, 'ReportBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    // SSE-KMS with a bucket key under a customer-managed key: one KMS request per bucket key, not per report.
    ...(encryptionKey === undefined
      ? { encryption: s3.BucketEncryption.S3_MANAGED }
      : { encryption: s3.BucketEncryption.KMS, encryptionKey, bucketKeyEnabled: true }),
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy,
    // A streamed report's upload that no holder completes or aborts (its worker died with no successor, or its
    // abort failed) stops costing storage after this; a run's uploads live at most maxRunSeconds (13.5 days).
    lifecycleRules: [
      { id: 'abort-incomplete-report-uploads', abortIncompleteMultipartUploadAfter: Duration.days(15) },
      ...(retention === undefined
        ? []
        : [
            {
              id: 'expire-reports',
              prefix: REPORT_KEY_PREFIX,
              expiration: retention,
              // Versioned, an expired report becomes a noncurrent version behind a delete marker: gone a day later.
              ...(versioned === true ? { noncurrentVersionExpiration: Duration.days(1) } : {}),
            },
          ]),
      // The delete markers the expiry leaves once their noncurrent version is gone (not in the rule above: S3 refuses
      // a rule with both an expiry in days and ExpiredObjectDeleteMarker).
      ...(retention !== undefined && versioned === true
        ? [{ id: 'remove-expired-delete-markers', prefix: REPORT_KEY_PREFIX, expiredObjectDeleteMarker: true }]
        : []),
    ],
    versioned: versioned === true ? true : undefined,
  });
}

/** The problems of the report bucket's props: their types, and options of the made bucket beside a given one. */
export function reportBucketPropsProblems(
  where: string,
  props: { reportBucket?: unknown; reportRetention?: unknown; versioned?: unknown },
): string[] {
  const problems: string[] = [];
  const given = props.reportBucket as Partial<s3.IBucket> | undefined;
  if (given !== undefined && (typeof given !== 'object' || given === null || typeof given.bucketArn !== 'string'))
    problems.push(
      `${where}.reportBucket: must be an s3.IBucket (new s3.Bucket or s3.Bucket.fromBucketName), got ${quoteValue(given)}`,
    );
  const retention = props.reportRetention;
  if (retention !== undefined) {
    if (
      !(retention instanceof Duration) ||
      !Number.isInteger(retention.toDays({ integral: false })) ||
      retention.toDays({ integral: false }) < 1
    )
      problems.push(
        `${where}.reportRetention: must be a whole number of days, such as Duration.days(400), got ${quoteValue(retention instanceof Duration ? retention.toString() : retention)}`,
      );
  }
  if (props.versioned !== undefined && typeof props.versioned !== 'boolean')
    problems.push(`${where}.versioned: must be true or false, got ${quoteValue(props.versioned)}`);
  if (given !== undefined)
    for (const name of ['reportRetention', 'versioned'] as const)
      if (props[name] !== undefined)
        problems.push(
          `${where}.${name}: applies to the bucket the construct makes; with reportBucket, set it on your own bucket`,
        );
  return problems;
}

/**
 * A report expiry shorter than a job's rows live: refused, since the console and `occurrences show` would link a row
 * to a report that is gone. Checked at synth, over every job added.
 */
export function reportRetentionProblems(
  where: string,
  retention: Duration | undefined,
  jobs: readonly { readonly id: string; readonly retentionDays: number }[],
): string[] {
  if (retention === undefined || jobs.length === 0) return [];
  const longest = jobs.reduce((a, b) => (b.retentionDays > a.retentionDays ? b : a));
  const needed = longest.retentionDays + ROW_DELETION_LAG_DAYS;
  const days = retention.toDays({ integral: false });
  if (days >= needed) return [];
  return [
    `${where}.reportRetention: must be at least ${needed} days, got ${days}: job ${quoteValue(longest.id)} keeps its ` +
      `occurrence rows ${longest.retentionDays} days (its retention), DynamoDB deletes an expired row up to ` +
      `${ROW_DELETION_LAG_DAYS} days later, and a report must outlive its row`,
  ];
}
