/**
 * Lambda's billed time, modelled from what the bench can measure honestly on moto: the CPU a handler spends (moto's
 * own slowness is not in it) and the requests it makes in turn (each one deployed round trip). Moto answers in tens of
 * milliseconds where DynamoDB answers in a few, so the wall time on moto is not what Lambda would bill.
 */
import type { OperationCounts } from './paths';

/** Lambda allocates CPU in proportion to memory: the equivalent of one vCPU at 1,769 MB (Lambda's memory docs). */
export const MB_PER_VCPU = 1_769;

/**
 * Modelled round trips from a function to the service in the same Region, milliseconds (not measured here: no AWS
 * account). DynamoDB's single-digit milliseconds; SQS and SNS a little more; an S3 PUT of a small object tens.
 */
export const ROUND_TRIP_MS = { DynamoDB: 8, SQS: 10, SNS: 15, S3: 15, 'S3.PutObject': 30 } as const;
const DEFAULT_ROUND_TRIP_MS = 10;

/** The share of one vCPU a function of `memoryMb` gets (a Node.js handler uses one core at most). */
export function vcpuShare(memoryMb: number): number {
  return Math.min(1, memoryMb / MB_PER_VCPU);
}

/** Milliseconds of waiting for `requests` made one after another ("Service.Operation" → count). */
export function roundTripMs(requests: OperationCounts): number {
  let ms = 0;
  for (const [key, n] of Object.entries(requests)) {
    const service = key.split('.')[0] as keyof typeof ROUND_TRIP_MS;
    const each = (ROUND_TRIP_MS as Record<string, number>)[key] ?? ROUND_TRIP_MS[service] ?? DEFAULT_ROUND_TRIP_MS;
    ms += n * each;
  }
  return ms;
}

/** Billed milliseconds: the CPU measured at a full core, stretched to the function's share, plus its round trips. */
export function modelledBilledMs(cpuMs: number, requests: OperationCounts, memoryMb: number): number {
  return cpuMs / vcpuShare(memoryMb) + roundTripMs(requests);
}

/** The model in one sentence, printed beside the figures it produced. */
export const LAMBDA_TIME_MODEL =
  `Lambda time = CPU ms measured on this machine at a full core ÷ (memory MB ÷ ${MB_PER_VCPU.toLocaleString('en-US')}: ` +
  `${vcpuShare(256).toFixed(3)} vCPU at 256 MB) + each request in turn × its modelled round trip (DynamoDB ` +
  `${ROUND_TRIP_MS.DynamoDB} ms, SQS ${ROUND_TRIP_MS.SQS} ms, SNS ${ROUND_TRIP_MS.SNS} ms, S3 PUT ` +
  `${ROUND_TRIP_MS['S3.PutObject']} ms, other S3 ${ROUND_TRIP_MS.S3} ms). Assumes this machine's core is as fast as ` +
  "Lambda's arm64 core and that the process's CPU while a handler ran is the handler's (they run in turn on the " +
  "happy path); moto's wall time is not used.";
