/**
 * Keeping a resource's logical ID when its construct moves. A ScheduledJob is a construct, and its schedule and its
 * worker's alarms live under it (so that `Tags.of(job)` and Aspects reach them), where stacks deployed before had them
 * under the ScheduledJobs' `Schedules` and `Monitoring`. CloudFormation replaces a resource whose logical ID changes,
 * and a schedule has a fixed name (its job id): its replacement would fail on the name. So a moved resource keeps the
 * ID its former path gave it.
 */
import { createHash } from 'node:crypto';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * The logical ID of the construct path `components` (below the stack), by aws-cdk-lib's own rule (makeUniqueId in
 * core/lib/private/uniqueid): `Default` dropped, the path's MD5 as 8 upper-case hex digits after the human part
 * (`Resource` dropped, consecutive repeats dropped, only letters and digits, at most 240 characters); a path of one
 * component is that component's letters and digits. test/lib/logical-ids.test.ts checks it against the stack's own.
 */
export function logicalIdOfPath(components: readonly string[]): string {
  const path = components.filter((c) => c !== 'Default');
  if (path.length === 0) throw new Error('logicalIdOfPath: no components');
  const clean = (s: string) => s.replace(/[^A-Za-z0-9]/g, '');
  if (path.length === 1 && clean(path[0]).length <= 255) return clean(path[0]);
  const hash = createHash('md5').update(path.join('/')).digest('hex').slice(0, 8).toUpperCase();
  const human: string[] = [];
  for (const c of path) if (human.length === 0 || !human[human.length - 1].endsWith(c)) human.push(c);
  return (
    human
      .filter((c) => c !== 'Resource')
      .map(clean)
      .join('')
      .slice(0, 240) + hash
  );
}

/**
 * Gives `element` the logical ID it had at `formerScope`/`formerIds` (the ids below that scope, down to the element's
 * own), when both are in one stack; in another (a stack that never held it) the element keeps its own.
 */
export function keepLogicalId(element: CfnElement, formerScope: IConstruct, ...formerIds: string[]): void {
  const stack = Stack.of(element);
  if (Stack.of(formerScope) !== stack) return;
  const below = (scope: IConstruct) => {
    const scopes = scope.node.scopes;
    return scopes.slice(scopes.indexOf(stack) + 1).map((s) => s.node.id);
  };
  // A rename rather than an override: Stack.getLogicalId (what references, grants and tests ask) gives the kept ID too.
  stack.renameLogicalId(logicalIdOfPath(below(element)), logicalIdOfPath([...below(formerScope), ...formerIds]));
}
