/**
 * What a worker placed in a VPC must reach, and a synth warning when it cannot: in subnets with no route out
 * (isolated subnets), every AWS API the worker calls needs a VPC endpoint, and without one the call hangs until the
 * function times out, in AWS only (the local run has no network of its own). docs/vpc.md lists the same endpoints.
 */
import { Annotations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/** An AWS service a worker calls, by the last part of its endpoint's service name (`com.amazonaws.<region>.<x>`). */
export interface WorkerEndpoint {
  readonly service: string;
  readonly label: string;
}

/** What every worker calls: its rows, its reports, and its own queue (a finished run sends the buffered next one). */
const ALWAYS: readonly WorkerEndpoint[] = [
  { service: 'dynamodb', label: 'DynamoDB (gateway)' },
  { service: 's3', label: 'S3 (gateway)' },
  { service: 'sqs', label: 'SQS (interface)' },
];
const SCHEDULER: WorkerEndpoint = {
  service: 'scheduler',
  label: 'EventBridge Scheduler (interface; pauseAfterFailures)',
};
const XRAY: WorkerEndpoint = { service: 'xray', label: 'X-Ray (interface; tracing)' };

/** What a worker's function calls, from its jobs and its tracing. */
export function workerEndpoints(options: { pausing: boolean; tracing: lambda.Tracing | undefined }): WorkerEndpoint[] {
  const traced = options.tracing !== undefined && options.tracing !== lambda.Tracing.DISABLED;
  return [...ALWAYS, ...(options.pausing ? [SCHEDULER] : []), ...(traced ? [XRAY] : [])];
}

/** Whether every subnet the function is placed in is isolated (no NAT, no internet gateway). */
function inIsolatedSubnets(vpc: ec2.IVpc, selection: ec2.SubnetSelection | undefined): boolean {
  const isolated = new Set(vpc.isolatedSubnets.map((s) => s.subnetId));
  const { subnetIds } = vpc.selectSubnets(selection);
  return subnetIds.length > 0 && subnetIds.every((id) => isolated.has(id));
}

/**
 * The service names of the VPC endpoints of `vpc` defined in its stack (`vpc.addGatewayEndpoint`, or beside it),
 * resolved and as JSON: an interface endpoint's name is a token (`Fn::Join` of the region and the service).
 */
function endpointServices(vpc: ec2.IVpc): string[] {
  const stack = vpc.stack;
  const vpcId = JSON.stringify(stack.resolve(vpc.vpcId));
  return stack.node
    .findAll()
    .filter((c): c is ec2.CfnVPCEndpoint => c instanceof ec2.CfnVPCEndpoint)
    .filter((e) => JSON.stringify(stack.resolve(e.vpcId)) === vpcId)
    .map((e) => JSON.stringify(stack.resolve(e.serviceName)));
}

/** Whether an endpoint's service name, resolved, as JSON, ends in `.<service>`: `com.amazonaws.<region>.sqs`. */
const serves = (serviceJson: string, service: string) => new RegExp(`\\.${service}"[\\]}]*$`).test(serviceJson);

/**
 * The warning of a worker in isolated subnets of `vpc` without the endpoints it needs, or undefined. A VPC the app
 * imports (Vpc.fromLookup, fromVpcAttributes) shows none of its endpoints: the warning says so and lists them all.
 */
export function missingEndpointsWarning(
  workerId: string,
  vpc: ec2.IVpc,
  selection: ec2.SubnetSelection | undefined,
  needed: readonly WorkerEndpoint[],
): string | undefined {
  if (!inIsolatedSubnets(vpc, selection)) return undefined;
  const defined = vpc instanceof ec2.Vpc;
  const services = defined ? endpointServices(vpc) : [];
  const missing = needed.filter((n) => !services.some((s) => serves(s, n.service)));
  if (missing.length === 0) return undefined;
  const what = missing.map((m) => m.label).join(', ');
  return defined
    ? `worker ${workerId} runs in isolated subnets (no route out) of VPC ${vpc.node.path}, which has no VPC endpoint for: ` +
        `${what}. Its calls would hang until the function times out; add them (vpc.addGatewayEndpoint, ` +
        'vpc.addInterfaceEndpoint) or place it in subnets with a NAT (docs/vpc.md)'
    : `worker ${workerId} runs in isolated subnets (no route out) of an imported VPC, whose endpoints the app cannot ` +
        `see; it needs VPC endpoints for: ${what} (docs/vpc.md). Acknowledge this warning once they exist`;
}

/** Adds the warning to the worker at synth, when the app has added its endpoints (they may come after the worker). */
export function warnOfMissingEndpoints(
  worker: Construct,
  workerId: string,
  vpc: ec2.IVpc,
  selection: ec2.SubnetSelection | undefined,
  needed: () => readonly WorkerEndpoint[],
): void {
  worker.node.addValidation({
    validate: () => {
      const warning = missingEndpointsWarning(workerId, vpc, selection, needed());
      if (warning !== undefined)
        Annotations.of(worker).addWarningV2('scheduled-jobs-stack:worker-vpc-endpoints', warning);
      return [];
    },
  });
}
