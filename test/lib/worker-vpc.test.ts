/**
 * A worker in isolated subnets without the VPC endpoints it calls: a synth warning naming each missing endpoint
 * (lib/worker-vpc.ts), none once they exist or when the subnets have a route out.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { describe, expect, it } from 'vitest';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { WORKER_ENTRY } from './fixtures/test-stack';

const HOURLY = ScheduleExpression.rate(Duration.hours(1));
const WARNING = /worker-vpc-endpoints/;

/** A stack whose one worker runs in the given subnets of a VPC built by `vpcOf`, with two jobs, one pausing. */
function stackWith(options: {
  subnets: ec2.SubnetType;
  endpoints?: (vpc: ec2.Vpc) => void;
  tracing?: lambda.Tracing;
}): Stack {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Vpc');
  const vpc = new ec2.Vpc(stack, 'Network', {
    natGateways: options.subnets === ec2.SubnetType.PRIVATE_WITH_EGRESS ? 1 : 0,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
      { name: 'workers', subnetType: options.subnets },
    ],
  });
  const jobs = new ScheduledJobs(stack, 'Jobs');
  const worker = jobs.addWorker('exports', {
    entry: WORKER_ENTRY,
    vpc,
    vpcSubnets: { subnetType: options.subnets },
    tracing: options.tracing,
  });
  jobs.addJob('weekly-export', { schedule: HOURLY, worker, pauseAfterFailures: 3 });
  jobs.addJob('hourly-export', { schedule: HOURLY, worker });
  // After the worker: the check runs at synth.
  options.endpoints?.(vpc);
  return stack;
}

/** The text of the endpoint warnings of the stack. */
const warningsOf = (stack: Stack): string[] =>
  Annotations.fromStack(stack)
    .findWarning('*', Match.stringLikeRegexp('.*'))
    .map((m) => String(m.entry.data))
    .filter((text) => WARNING.test(text));

describe('a worker in a VPC', () => {
  it('in isolated subnets without endpoints: a warning naming every endpoint its calls need', () => {
    const [warning, ...others] = warningsOf(
      stackWith({ subnets: ec2.SubnetType.PRIVATE_ISOLATED, tracing: lambda.Tracing.ACTIVE }),
    );
    expect(others).toEqual([]);
    expect(warning).toContain('worker exports runs in isolated subnets (no route out) of VPC Vpc/Network');
    for (const endpoint of ['DynamoDB (gateway)', 'S3 (gateway)', 'SQS (interface)', 'EventBridge Scheduler', 'X-Ray'])
      expect(warning).toContain(endpoint);
  });

  it('names only the endpoints still missing, and nothing once all exist', () => {
    const some = warningsOf(
      stackWith({
        subnets: ec2.SubnetType.PRIVATE_ISOLATED,
        endpoints: (vpc) => {
          vpc.addGatewayEndpoint('DynamoDb', { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB });
          vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
        },
      }),
    );
    expect(some).toHaveLength(1);
    expect(some[0]).not.toContain('DynamoDB');
    expect(some[0]).toContain('SQS (interface), EventBridge Scheduler');
    const all = stackWith({
      subnets: ec2.SubnetType.PRIVATE_ISOLATED,
      endpoints: (vpc) => {
        vpc.addGatewayEndpoint('DynamoDb', { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB });
        vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
        vpc.addInterfaceEndpoint('Sqs', { service: ec2.InterfaceVpcEndpointAwsService.SQS });
        // aws-cdk-lib has no constant for Scheduler's endpoint: its name, as a user writes it.
        vpc.addInterfaceEndpoint('Scheduler', { service: new ec2.InterfaceVpcEndpointAwsService('scheduler') });
      },
    });
    expect(warningsOf(all)).toEqual([]);
  });

  it('in subnets with a NAT: no warning', () => {
    expect(warningsOf(stackWith({ subnets: ec2.SubnetType.PRIVATE_WITH_EGRESS }))).toEqual([]);
  });
});
