/**
 * One moto_server for the whole bench, with the recorder and the capacity ledger wired into every client the local
 * driver and the handlers use. Each path gets a fresh emulator state (reset) and a fresh pipeline.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { documentClient, s3Client, snsClient, sqsClient } from '../functions/aws/clients';
import type { JobSettings } from '../functions/protocol/job-settings';
import type { JobDefinition } from '../functions/protocol/ports';
import { type HandlerName, LocalPipeline } from '../scripts/local/pipeline';
import { LOCAL_REGION } from '../testing/local/local-aws';
import { type MotoServer, startMotoServer } from '../testing/local/moto-server';
import { CapacityLedger } from './capacity-ledger';
import { currentHandler, type RecordedRequest, RequestRecorder, recordRequests } from './request-recorder';

export interface HandlerTiming {
  readonly name: HandlerName | 'reconciler';
  readonly ms: number;
  /**
   * CPU milliseconds (user + system) of the whole bench process while the invocation ran: the handler's own work, its
   * SDK clients' signing and parsing, and whatever else the process did meanwhile (the recorder, the event sources'
   * polls). On the happy path the handlers run in turn, so it is close to the handler's own.
   */
  readonly cpuMs: number;
}

export class BenchSession {
  readonly recorder = new RequestRecorder();
  readonly ledger: CapacityLedger;
  readonly logLines: string[] = [];
  readonly timings: HandlerTiming[] = [];
  readonly metricsRecorded: string[] = [];

  private constructor(readonly moto: MotoServer) {
    // The ledger reads items with a client of its own: neither recorded nor serialized (it runs inside the lock).
    this.ledger = new CapacityLedger(
      new DynamoDBClient({
        endpoint: moto.endpoint,
        region: LOCAL_REGION,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
  }

  static async start(): Promise<BenchSession> {
    return new BenchSession(await startMotoServer());
  }

  async stop(): Promise<void> {
    await this.moto.stop();
  }

  /** A fresh emulator and pipeline; the record starts empty once it is built. */
  async pipeline(
    settings: JobSettings | readonly JobSettings[],
    jobs: Record<string, JobDefinition>,
    workers: number,
    runtime: 'local' | 'deployed' = 'local',
  ): Promise<LocalPipeline> {
    await this.moto.reset();
    this.recorder.dynamoObserver = undefined;
    const pipeline = await this.recorder.whilePaused(() =>
      LocalPipeline.create({
        endpoint: this.moto.endpoint,
        settings: Array.isArray(settings) ? settings : [settings as JobSettings],
        jobs,
        workers,
        log: (line) => this.logLines.push(line),
        instrument: {
          metrics: { add: (name) => void this.metricsRecorded.push(name) },
          wrap: (name, handler) => this.timed(name, handler),
          deployedRuntime: runtime === 'deployed',
        },
      }),
    );
    this.instrument(pipeline);
    this.clear();
    return pipeline;
  }

  /** Wraps a handler so that each invocation's duration is kept (what Lambda bills as duration, locally). */
  timed<F extends (...args: never[]) => Promise<unknown>>(name: HandlerTiming['name'], handler: F): F {
    return (async (...args: never[]) => {
      const started = performance.now();
      const cpu = process.cpuUsage();
      try {
        return await currentHandler.run(name, () => handler(...args));
      } finally {
        const used = process.cpuUsage(cpu);
        this.timings.push({ name, ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 });
      }
    }) as F;
  }

  clear(): void {
    this.recorder.take();
    this.ledger.take();
    this.logLines.length = 0;
    this.timings.length = 0;
    this.metricsRecorded.length = 0;
  }

  /**
   * The handlers' clients are the module singletons of functions/aws/clients.ts (built when the pipeline built the
   * handlers); the driver's own clients serve the event sources (job queue, stream) and the bench's inspection.
   */
  private instrument(pipeline: LocalPipeline): void {
    const r = this.recorder;
    for (const client of [documentClient(), s3Client(), sqsClient(), snsClient()]) recordRequests(client, r, 'handler');
    const jobQueue = pipeline.resources.jobQueueUrl;
    recordRequests(pipeline.clients.sqs, r, (_s, _o, queueUrl) => (queueUrl === jobQueue ? 'event-source' : 'driver'));
    recordRequests(pipeline.clients.streams, r, 'event-source');
    for (const client of [pipeline.clients.dynamo, pipeline.clients.s3, pipeline.clients.sns]) {
      recordRequests(client, r, 'driver');
    }
    this.recorder.dynamoObserver = this.ledger;
  }
}

export function handlerRequests(requests: readonly RecordedRequest[]): RecordedRequest[] {
  return requests.filter((r) => r.role === 'handler');
}
