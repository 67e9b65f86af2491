/**
 * The reconciler reads each job's template with its last change (functions/aws/dated-templates.ts), so that the
 * audit puts again the schedules synced before a deployment changed the template, and none after it.
 */
import {
  GetScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
  ThrottlingException,
} from '@aws-sdk/client-scheduler';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { withDatedTemplates } from '../../functions/aws/dated-templates';
import { DependencyError } from '../../functions/protocol/errors';
import { noMetrics } from '../../functions/protocol/ports';
import { reconcileSchedules } from '../../functions/protocol/reconcile-schedules';
import { FakeCursorStore, FakeProjection, FakeRegistry, iso, row } from '../protocol/drift-fakes';

const JOB = 'weekly-report';
const GROUP = 'Jobs-weekly-report';
const NOW = Date.parse('2026-12-01T12:00:00Z');
const schedulerMock = mockClient(SchedulerClient);

const templateSchedule = (changedAt: number) => ({
  Name: JOB,
  LastModificationDate: new Date(changedAt),
  FlexibleTimeWindow: { Mode: 'OFF' as const },
  Target: {
    Arn: 'arn:aws:lambda:eu-west-1:123456789012:function:trigger',
    RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
    Input: JSON.stringify({ jobId: JOB, scheduledTime: '<aws.scheduler.scheduled-time>', keyedScheduleGroup: GROUP }),
  },
});

beforeEach(() => {
  schedulerMock.reset();
});

describe('withDatedTemplates', () => {
  it('reads the template with the time its schedule last changed', async () => {
    schedulerMock.on(GetScheduleCommand).resolves(templateSchedule(NOW - 60_000));
    const projection = withDatedTemplates(new FakeProjection(() => NOW), new SchedulerClient({}), 'shared');
    expect(await projection.template(JOB)).toMatchObject({
      jobId: JOB,
      group: GROUP,
      lastModifiedAt: iso(NOW - 60_000),
    });
    expect(schedulerMock.commandCalls(GetScheduleCommand)[0].args[0].input).toEqual({ GroupName: 'shared', Name: JOB });
  });

  it('gives undefined for a job without a template, and a transient DependencyError for throttling', async () => {
    const projection = withDatedTemplates(new FakeProjection(() => NOW), new SchedulerClient({}), 'shared');
    schedulerMock
      .on(GetScheduleCommand)
      .rejectsOnce(new ResourceNotFoundException({ $metadata: {}, message: 'no', Message: 'no' }))
      .rejectsOnce(new ThrottlingException({ $metadata: {}, message: 'slow down', Message: 'slow down' }));
    expect(await projection.template('nightly')).toBeUndefined();
    const error = await projection.template(JOB).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyError);
    expect((error as DependencyError).kind).toBe('transient');
  });

  it('makes the audit put again the schedules synced before the template changed, and only those', async () => {
    schedulerMock.on(GetScheduleCommand).resolves(templateSchedule(NOW - 600_000));
    const inner = new FakeProjection(() => NOW);
    const registry = new FakeRegistry();
    const projection = withDatedTemplates(inner, new SchedulerClient({}), 'shared');
    const template = await projection.template(JOB);
    if (template === undefined) throw new Error('no template');
    const before = row(JOB, 'before', 0, NOW - 3_600_000);
    const after = row(JOB, 'after', 0, NOW - 60_000);
    registry.add(before, after);
    inner.project(before, template, NOW - 3_600_000);
    inner.project(after, template, NOW - 60_000);
    const report = await reconcileSchedules({
      registry,
      projection,
      cursor: new FakeCursorStore(),
      jobs: [JOB],
      clock: { now: () => NOW },
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      metrics: noMetrics,
      limits: { auditSlicesPerRun: 1 },
    });
    expect(report.repairs.map((r) => [r.scheduleKey, r.kind])).toEqual([['before', 'stale-template']]);
  });
});
