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

export function reportBucket(scope: Construct, removalPolicy: RemovalPolicy): s3.Bucket {
  const encryptionKey = encryptionKeyOf(scope);
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
    lifecycleRules: [{ id: 'abort-incomplete-report-uploads', abortIncompleteMultipartUploadAfter: Duration.days(15) }],
  });
}
