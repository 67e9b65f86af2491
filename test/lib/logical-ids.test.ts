/**
 * lib/logical-ids.ts: the logical ID a moved resource keeps is the one aws-cdk-lib gives its former path, computed by
 * the stack itself here, for paths with `Default`, `Resource`, repeats, punctuation and one component.
 */
import { App, type CfnElement, CfnResource, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { keepLogicalId, logicalIdOfPath } from '../../lib/logical-ids';

/** The logical ID the stack gives a resource built at `ids` (below the stack). */
function stackIdAt(ids: string[]): string {
  const stack = new Stack(new App(), 'S');
  let scope: Construct = stack;
  for (const id of ids.slice(0, -1)) scope = new Construct(scope, id);
  const element = new CfnResource(scope, ids[ids.length - 1], { type: 'Test::Thing' });
  return stack.getLogicalId(element);
}

describe('logicalIdOfPath', () => {
  it.each([
    [['Jobs', 'Schedules', 'Schedule-weekly-export', 'Resource']],
    [['Jobs', 'Monitoring', 'Alarm-dlq-exports', 'Resource']],
    [['Jobs', 'Workers', 'digest', 'Default', 'Function', 'Resource']],
    [['Jobs', 'Jobs', 'JobsThing']],
    [['Only-One']],
    [['A'.repeat(150), 'B'.repeat(150), 'Resource']],
  ])('gives %j the ID the stack gives it', (ids) => {
    expect(logicalIdOfPath(ids)).toBe(stackIdAt(ids));
  });
});

describe('keepLogicalId', () => {
  it("keeps a moved resource at its former path's ID, and leaves one in another stack its own", () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    const jobs = new Construct(stack, 'Jobs');
    const former = new Construct(jobs, 'Schedules');
    const moved = new CfnResource(new Construct(jobs, 'Job'), 'Schedule', { type: 'Test::Thing' });
    keepLogicalId(moved, former, 'Schedule-weekly', 'Resource');
    expect(stack.resolve((moved as CfnElement).logicalId)).toBe(
      stackIdAt(['Jobs', 'Schedules', 'Schedule-weekly', 'Resource']),
    );

    const other = new Stack(app, 'Other');
    const elsewhere = new CfnResource(other, 'Schedule', { type: 'Test::Thing' });
    keepLogicalId(elsewhere, former, 'Schedule-weekly', 'Resource');
    expect(other.resolve(elsewhere.logicalId)).toBe('Schedule');
  });
});
