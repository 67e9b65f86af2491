/**
 * The SDK clients and the FakeAws behind them, built once per process and reused by every run: building clients is
 * a third of a short run, and a new FakeAws per run leaves sinon fakes behind (about 0.4 MB a run).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { FakeAws } from './fakes/fake-aws';
import { FakeScheduler } from './fakes/fake-scheduler';
import type { VirtualTime } from './virtual-time';

export interface SdkClients {
  readonly doc: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  readonly sns: SNSClient;
  readonly scheduler: SchedulerClient;
}

let fake: { aws: FakeAws; time: VirtualTime } | undefined;

/**
 * One FakeAws for the whole process, reset for each run and reading the clock of the run's VirtualTime. Its mocks
 * stay installed on the SDK client classes, which only the simulation uses in its process.
 */
export function sharedFakeAws(time: VirtualTime): FakeAws {
  if (fake === undefined) {
    const state: { time: VirtualTime } = { time };
    fake = Object.assign(state, { aws: new FakeAws(() => state.time.now) });
  }
  fake.time = time;
  fake.aws.reset();
  return fake.aws;
}

let scheduler: { fake: FakeScheduler; time: VirtualTime } | undefined;

/** One FakeScheduler for the whole process, reset for each run, on the run's clock (as sharedFakeAws). */
export function sharedFakeScheduler(time: VirtualTime): FakeScheduler {
  if (scheduler === undefined) {
    const state: { time: VirtualTime } = { time };
    scheduler = Object.assign(state, { fake: new FakeScheduler(() => state.time.now) });
  }
  scheduler.time = time;
  scheduler.fake.reset();
  return scheduler.fake;
}

let clients: SdkClients | undefined;

/** The SDK clients of the process; each run re-routes their send through its own network (sim/network.ts). */
export function sdkClients(): SdkClients {
  if (clients === undefined) {
    const credentials = { accessKeyId: 'sim', secretAccessKey: 'sim' };
    clients = {
      doc: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-central-1', credentials }), {
        marshallOptions: { removeUndefinedValues: true },
      }),
      s3: new S3Client({ region: 'eu-central-1', credentials }),
      sqs: new SQSClient({ region: 'eu-central-1', credentials }),
      sns: new SNSClient({ region: 'eu-central-1', credentials }),
      scheduler: new SchedulerClient({ region: 'eu-central-1', credentials }),
    };
  }
  return clients;
}
