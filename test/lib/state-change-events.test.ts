/**
 * ScheduledJobs' state-change events (lib/state-change-events.ts): off by default; when asked for, a function on the
 * table's stream whose filter passes exactly the changes that make an event, with events:PutEvents on one bus only,
 * a failure queue that is alarmed, and its props validated when the construct is made.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as chatbot from 'aws-cdk-lib/aws-chatbot';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { EVENT_SOURCE, eventOfChange } from '../../functions/protocol/occurrence-events';
import { ValidationError } from '../../lib/errors';
import { ScheduledJobs, type ScheduledJobsProps } from '../../lib/scheduled-jobs';
import { EVENTS_BATCH_SIZE } from '../../lib/state-change-events';
import { passesFilters } from '../../testing/local/event-filter';
import { WORKER_ENTRY } from './fixtures/test-stack';

const ENV = { account: '123456789012', region: 'eu-central-1' };
const BUS_ARN = 'arn:aws:events:eu-central-1:210987654321:event-bus/ops-events';

function stackWith(props: ScheduledJobsProps): { stack: Stack; jobs: ScheduledJobs; template: Template } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Events', { env: ENV });
  const jobs = new ScheduledJobs(stack, 'Jobs', props);
  jobs.addJob('nightly', {
    schedule: ScheduleExpression.expression('cron(0 2 * * ? *)'),
    entry: WORKER_ENTRY,
    pauseAfterFailures: 3,
  });
  return { stack, jobs, template: Template.fromStack(stack) };
}
const logicalId = (c: IConstruct) => Stack.of(c).getLogicalId(c.node.defaultChild as CfnElement);

function eventsPiece(jobs: ScheduledJobs) {
  const piece = jobs.stateChangeEvents;
  if (piece === undefined) throw new Error('no state-change events');
  return piece;
}

function mappingOf(template: Template, functionId: string): Record<string, unknown> {
  const [mapping] = Object.values(
    template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: functionId } },
    }),
  ) as { Properties: Record<string, unknown> }[];
  return mapping.Properties;
}

describe('ScheduledJobs stateChangeEvents', () => {
  it('is off by default: no events function, no PutEvents anywhere', () => {
    const { jobs, template } = stackWith({});
    expect(jobs.stateChangeEvents).toBeUndefined();
    expect(JSON.stringify(template.toJSON())).not.toContain('events:PutEvents');
    expect(jobs.monitoring.sharedAlarms.deadLetters.EventsFailureQueue).toBeUndefined();
  });

  it('grants events:PutEvents on the default bus of the stack and nothing else beyond its stream', () => {
    const { jobs, template } = stackWith({ stateChangeEvents: true });
    const piece = eventsPiece(jobs);
    const [policy] = Object.values(
      template.findResources('AWS::IAM::Policy', {
        Properties: { Roles: [{ Ref: logicalId(piece.fn.role as IConstruct) }] },
      }),
    ) as { Properties: { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } } }[];
    const statements = policy.Properties.PolicyDocument.Statement;
    const actions = statements.flatMap((s) => s.Action).sort();
    expect(actions).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
      'events:PutEvents',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:SendMessage',
    ]);
    const put = statements.find((s) => s.Action === 'events:PutEvents');
    expect(JSON.stringify(put?.Resource)).toContain(':event-bus/default');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ EVENT_BUS_NAME: Match.anyValue() }) },
    });
  });

  it('is traced as the stack is: the events function takes the stack tracing, and is untraced without it', () => {
    const traced = stackWith({ stateChangeEvents: true, tracing: lambda.Tracing.ACTIVE });
    traced.template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Description: Match.stringLikeRegexp('EventBridge event'),
      TracingConfig: { Mode: 'Active' },
    });
    const untraced = stackWith({ stateChangeEvents: true });
    untraced.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('EventBridge event'),
      TracingConfig: Match.absent(),
    });
  });

  it('puts on the bus it is given, and only there', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Given', { env: ENV });
    const bus = events.EventBus.fromEventBusArn(stack, 'Ops', BUS_ARN);
    const jobs = new ScheduledJobs(stack, 'Jobs', {
      stateChangeEvents: { eventBus: bus, consoleUrl: 'http://127.0.0.1:8765' },
    });
    jobs.addJob('nightly', { schedule: ScheduleExpression.expression('cron(0 2 * * ? *)'), entry: WORKER_ENTRY });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([{ Action: 'events:PutEvents', Effect: 'Allow', Resource: BUS_ARN }]),
      },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ EVENT_BUS_NAME: BUS_ARN, CONSOLE_URL: 'http://127.0.0.1:8765' }) },
    });
    expect(eventsPiece(jobs).eventBus).toBe(bus);
  });

  it('reads the stream from TRIM_HORIZON, reports item failures, bisects, retries until records age out, and parks in an alarmed queue', () => {
    const { jobs, template } = stackWith({ stateChangeEvents: true });
    const piece = eventsPiece(jobs);
    const mapping = mappingOf(template, logicalId(piece.fn));
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [logicalId(jobs.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: EVENTS_BATCH_SIZE,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(piece.failureQueue), 'Arn'] } },
      },
    });
    expect(mapping.MaximumRetryAttempts ?? -1).toBe(-1);
    const alarm = jobs.monitoring.sharedAlarms.deadLetters.EventsFailureQueue;
    expect(alarm).toBeDefined();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(piece.failureQueue), 'QueueName'] } }],
    });
  });

  describe('the stream filter', () => {
    const { jobs, template } = stackWith({ stateChangeEvents: true });
    const filters = (
      mappingOf(template, logicalId(eventsPiece(jobs).fn)).FilterCriteria as { Filters: { Pattern: string }[] }
    ).Filters.map((f) => JSON.parse(f.Pattern));
    const record = (eventName: string, old: object | undefined, now: object | undefined) => ({
      eventName,
      dynamodb: {
        Keys: marshall({ jobId: 'nightly', scheduledTime: '2026-11-30T02:00:00Z' }),
        ...(old === undefined ? {} : { OldImage: marshall(old) }),
        ...(now === undefined ? {} : { NewImage: marshall(now) }),
      },
    });
    const occurrence = (eventName: string, from: string | undefined, to: string | undefined) =>
      passesFilters(
        record(
          eventName,
          from === undefined ? undefined : { jobId: 'nightly', status: from },
          to === undefined ? undefined : { jobId: 'nightly', status: to },
        ),
        filters,
      );
    const jobState = (old: object, now: object) =>
      passesFilters(
        {
          eventName: 'MODIFY',
          dynamodb: {
            Keys: marshall({ jobId: 'nightly', scheduledTime: '#job' }),
            OldImage: marshall({ jobId: 'nightly', scheduledTime: '#job', ...old }),
            NewImage: marshall({ jobId: 'nightly', scheduledTime: '#job', ...now }),
          },
        },
        filters,
      );

    it('passes every change from an open status to a final one', () => {
      for (const from of ['PENDING', 'RUNNING', 'RETRY_WAIT', 'BUFFERED'])
        for (const to of ['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED'])
          expect(occurrence('MODIFY', from, to), `${from} -> ${to}`).toBe(true);
      expect(occurrence('INSERT', undefined, 'SKIPPED')).toBe(true);
    });

    it('holds back every other change of an occurrence', () => {
      expect(occurrence('MODIFY', 'SUCCEEDED', 'SUCCEEDED')).toBe(false);
      expect(occurrence('MODIFY', 'PENDING', 'RUNNING')).toBe(false);
      expect(occurrence('MODIFY', 'RUNNING', 'RETRY_WAIT')).toBe(false);
      expect(occurrence('MODIFY', 'FAILED', 'PENDING')).toBe(false);
      expect(occurrence('INSERT', undefined, 'PENDING')).toBe(false);
      expect(occurrence('REMOVE', 'SUCCEEDED', undefined)).toBe(false);
    });

    it('passes a job pausing itself after failures, and no other write of the job-state row', () => {
      const paused = { pausedAt: '2026-11-30T06:10:00.000Z', pauseCause: 'failures' };
      expect(jobState({ version: 3 }, { version: 4, ...paused })).toBe(true);
      expect(jobState({ version: 3 }, { version: 4, ...paused, pauseCause: 'operator' })).toBe(false);
      expect(jobState(paused, { ...paused, slotTime: 'x' })).toBe(false);
      expect(jobState({ version: 3 }, { version: 4, slotTime: 'x' })).toBe(false);
    });
  });

  describe('validation', () => {
    const make = (props: ScheduledJobsProps) => () => stackWith(props);

    it('refuses a malformed event bus ARN with a ValidationError naming the property and the ARN', () => {
      const app = new App();
      const stack = new Stack(app, 'Bad', { env: ENV });
      const bus = events.EventBus.fromEventBusArn(stack, 'Bus', 'arn:aws:events:eu-central-1:12345:event-bus');
      let tries = 0;
      const build = () => new ScheduledJobs(stack, `Jobs${++tries}`, { stateChangeEvents: { eventBus: bus } });
      expect(build).toThrow(ValidationError);
      expect(build).toThrow(
        'ScheduledJobs Bad/Jobs2.stateChangeEvents.eventBus: the event bus ARN "arn:aws:events:eu-central-1:12345:event-bus" is malformed',
      );
    });

    it('refuses a console URL that is not http(s), and a value that is not options', () => {
      expect(make({ stateChangeEvents: { consoleUrl: 'localhost:8765' } })).toThrow(
        /stateChangeEvents\.consoleUrl: must be an http\(s\) URL, got "localhost:8765"/,
      );
      expect(make({ stateChangeEvents: 'yes' as never })).toThrow(/stateChangeEvents: must be true, false or/);
    });

    it('takes a bus of this app, whose ARN is known at deploy time only', () => {
      const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
      const stack = new Stack(app, 'Own', { env: ENV });
      const bus = new events.EventBus(stack, 'Bus');
      const jobs = new ScheduledJobs(stack, 'Jobs', { stateChangeEvents: { eventBus: bus } });
      jobs.addJob('nightly', { schedule: ScheduleExpression.expression('cron(0 2 * * ? *)'), entry: WORKER_ENTRY });
      Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            { Action: 'events:PutEvents', Effect: 'Allow', Resource: { 'Fn::GetAtt': [logicalId(bus), 'Arn'] } },
          ]),
        },
      });
    });
  });
});

describe('the example rule of docs/events.md', () => {
  /** The docs' example, as written there (kept in step by hand; the test below checks what it promises). */
  function slackExample(stack: Stack): void {
    const jobs = new ScheduledJobs(stack, 'Jobs', { stateChangeEvents: true });
    jobs.addJob('nightly', { schedule: ScheduleExpression.expression('cron(0 2 * * ? *)'), entry: WORKER_ENTRY });
    const outcomes = new sns.Topic(stack, 'JobOutcomes', { enforceSSL: true });
    const field = (path: string) => events.EventField.fromPath(path);
    const slackMessage = (title: string, description: string) =>
      events.RuleTargetInput.fromObject({
        version: '1.0',
        source: 'custom',
        content: { textType: 'client-markdown', title, description },
      });
    new events.Rule(stack, 'OccurrenceFailed', {
      description: 'A scheduled job occurrence FAILED',
      eventPattern: {
        source: ['scheduled-jobs-stack'],
        detailType: ['Occurrence State Change'],
        detail: { version: ['1'], status: ['FAILED'] },
      },
      targets: [
        new targets.SnsTopic(outcomes, {
          message: slackMessage(
            `:x: ${field('$.detail.jobId')} FAILED`,
            `${field('$.detail.scheduledTime')}, attempt ${field('$.detail.attempt')}: ${field('$.detail.reason')}\n${field('$.detail.links.item')}`,
          ),
        }),
      ],
    });
    new events.Rule(stack, 'JobPaused', {
      description: 'A scheduled job paused itself after its failures',
      eventPattern: { source: ['scheduled-jobs-stack'], detailType: ['Job Paused'], detail: { version: ['1'] } },
      targets: [
        new targets.SnsTopic(outcomes, {
          message: slackMessage(
            `:double_vertical_bar: ${field('$.detail.jobId')} paused itself`,
            `${field('$.detail.note')}. Resume: occurrences resume ${field('$.detail.jobId')}`,
          ),
        }),
      ],
    });
    new chatbot.SlackChannelConfiguration(stack, 'JobsSlack', {
      slackChannelConfigurationName: 'scheduled-jobs',
      slackWorkspaceId: 'T0123ABCDEF',
      slackChannelId: 'C0123ABCDEF',
      notificationTopics: [outcomes],
    });
  }

  /** An event as EventBridge delivers it, from the mapping's output. */
  const delivered = (old: Record<string, unknown>, now: Record<string, unknown>) => {
    const mapped = eventOfChange({
      eventName: 'MODIFY',
      oldImage: old,
      newImage: now,
      table: { tableName: 'T', region: 'eu-central-1' },
      recordedAt: '2026-11-30T06:05:00.000Z',
    });
    if (mapped.kind !== 'event') throw new Error('no event');
    return { source: EVENT_SOURCE, 'detail-type': mapped.event.detailType, detail: mapped.event.detail };
  };
  const occurrence = (status: string, extra: Record<string, unknown> = {}) => ({
    jobId: 'nightly',
    scheduledTime: '2026-11-30T02:00:00Z',
    status,
    attempt: 3,
    ...extra,
  });

  it('synthesizes, and its rules match a FAILED occurrence and a self-pause, and nothing else the stack puts', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Slack', { env: ENV });
    slackExample(stack);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::Chatbot::SlackChannelConfiguration', 1);
    // The example's two rules: the stack's reconciler rule runs on a schedule, without a pattern.
    const patterns = Object.values(template.findResources('AWS::Events::Rule'))
      .map((r) => (r as { Properties: { EventPattern?: unknown } }).Properties.EventPattern)
      .filter((p) => p !== undefined);
    expect(patterns).toHaveLength(2);
    const matchesARule = (event: unknown) => passesFilters(event, patterns);

    expect(matchesARule(delivered(occurrence('RETRY_WAIT'), occurrence('FAILED', { lastError: 'boom' })))).toBe(true);
    const state = { jobId: 'nightly', scheduledTime: '#job', version: 1 };
    const pause = { pausedAt: '2026-11-30T06:00:00.000Z', pauseCause: 'failures', pauseNote: 'paused after 3' };
    expect(matchesARule(delivered(state, { ...state, ...pause }))).toBe(true);
    expect(matchesARule(delivered(occurrence('RUNNING'), occurrence('SUCCEEDED', { reportKey: 'r' })))).toBe(false);
    expect(matchesARule(delivered(occurrence('PENDING'), occurrence('CANCELLED')))).toBe(false);
  });
});
