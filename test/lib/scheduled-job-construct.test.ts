/**
 * ScheduledJob is a construct: Tags.of(job) reaches exactly that job's taggable resources (for a job with an
 * entry, its worker's function, queues, role and alarms; Scheduler schedules take no tags), an Aspect on a job visits
 * its schedule and no other job's, and node.addDependency on a job makes a resource wait for all of it.
 */
import { App, Aspects, type CfnElement, CfnResource, type IAspect, Stack, Tags } from 'aws-cdk-lib';
import { CfnSchedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_DIGEST_ENTRY } from '../../examples/sample-app/sample-stack';
import type { ScheduledJob } from '../../lib/scheduled-job';
import { ScheduledJobs } from '../../lib/scheduled-jobs';
import { WORKER_ENTRY } from './fixtures/test-stack';
import type { TemplateResource } from './template-json';

const HOURLY = ScheduleExpression.expression('rate(1 hour)');

/** Records the schedules (by name) an aspect visits. */
class ScheduleVisits implements IAspect {
  readonly names: string[] = [];
  visit(node: IConstruct): void {
    if (node instanceof CfnSchedule) this.names.push(String(node.name));
  }
}

let resources: Record<string, TemplateResource>;
let stack: Stack;
let jobs: ScheduledJobs;
let own: ScheduledJob;
let otherOwn: ScheduledJob;
let sharedA: ScheduledJob;
const visits = new ScheduleVisits();

beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  stack = new Stack(app, 'Tagged');
  jobs = new ScheduledJobs(stack, 'Jobs');
  const exportsWorker = jobs.addWorker('exports', { entry: WORKER_ENTRY });
  sharedA = jobs.addJob('weekly-export', { schedule: HOURLY, worker: exportsWorker });
  jobs.addJob('hourly-export', { schedule: HOURLY, worker: exportsWorker });
  own = jobs.addJob('digest', { schedule: HOURLY, entry: SAMPLE_DIGEST_ENTRY });
  otherOwn = jobs.addJob('other-digest', { schedule: HOURLY, entry: SAMPLE_DIGEST_ENTRY });
  Tags.of(own).add('team', 'digests');
  Aspects.of(sharedA).add(visits);
  new CfnResource(stack, 'AfterDigest', { type: 'Test::Waiter' }).node.addDependency(own);
  resources = app.synth().getStackByName(stack.stackName).template.Resources;
});

/** The logical ID in the template (an overridden one included, which Stack.getLogicalId does not give). */
const idOf = (c: IConstruct): string => stack.resolve(((c.node.defaultChild ?? c) as CfnElement).logicalId);
const tagsOf = (id: string) => (resources[id].Properties?.Tags ?? []) as unknown as { Key: string; Value: string }[];
const tagged = (id: string) => tagsOf(id).some((t) => t.Key === 'team' && t.Value === 'digests');

describe('ScheduledJob as a construct', () => {
  it('is a construct under the ScheduledJobs, holding its own worker, and a shared worker holds its jobs', () => {
    expect(own.node.path).toBe('Tagged/Jobs/Workers/digest');
    expect(own.worker.node.scopes).toContain(own);
    expect(sharedA.node.scopes).toContain(jobs.workers.get('exports'));
    expect(own.schedule?.node.scopes).toContain(own);
  });

  it("Tags.of(job) reaches its worker's function, queues, role and alarms, and nothing of another job", () => {
    const w = own.worker;
    const reached = [w.function, w.queue, w.deadLetterQueue, w.function.role!].map(idOf);
    for (const id of reached) expect(tagged(id), id).toBe(true);
    const alarms = Object.values(jobs.monitoring.workerAlarms('digest'));
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) expect(tagged(idOf(alarm)), idOf(alarm)).toBe(true);
    const elsewhere = [otherOwn.worker, jobs.workers.get('exports')!].flatMap((x) => [x.function, x.queue].map(idOf));
    for (const id of [...elsewhere, idOf(jobs.triggerFunction), idOf(jobs.table)]) expect(tagged(id), id).toBe(false);
    const taggedIds = Object.keys(resources).filter(tagged).sort();
    console.log(`Tags.of(job 'digest') reached ${taggedIds.length} resources: ${taggedIds.join(', ')}`);
  });

  it("an Aspect on a shared worker's job visits its schedule, not its worker mate's", () => {
    expect(visits.names).toEqual(['weekly-export']);
  });

  it('node.addDependency(job) makes a resource wait for the job (its schedule and its worker)', () => {
    const dependsOn = (resources.AfterDigest as unknown as { DependsOn: string[] }).DependsOn;
    expect(dependsOn).toEqual(expect.arrayContaining([idOf(own.schedule!), idOf(own.worker.function)]));
    expect(dependsOn).not.toContain(idOf(otherOwn.schedule!));
  });

  it('keeps the logical IDs a schedule and an alarm had before jobs were constructs', () => {
    expect(idOf(own.schedule!)).toMatch(/^JobsSchedulesScheduledigest[0-9A-F]{8}$/);
    expect(idOf(jobs.monitoring.workerAlarms('digest').deadLetters!)).toMatch(
      /^JobsMonitoringAlarmdlqdigest[0-9A-F]{8}$/,
    );
  });
});
