/**
 * What the compiler says to an app that gets a job's props wrong: an old 0.1.0 name gives its
 * replacement, also inside a spread shared-settings object (which the excess-property check skips); neither and both
 * of `worker` and `entry` name both. Compiles an app file with the TypeScript compiler API and reads the messages.
 */
import * as path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(__dirname, '..', '..');
const APP_FILE = path.join(ROOT, 'test', 'lib', 'fixtures', 'app-with-mistakes.ts');

/** The app, one mistake per line; the messages are read by the line they are reported at. */
const APP = [
  "import { Duration, Stack } from 'aws-cdk-lib';",
  "import { ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';",
  "import { ScheduledJobs } from '../../../lib/index';",
  "const jobs = new ScheduledJobs(new Stack(), 'Jobs');",
  "const worker = jobs.addWorker('exports', { entry: 'w.ts' });",
  'const schedule = ScheduleExpression.rate(Duration.hours(1));',
  'const shared = { timeoutSeconds: 300, retentionDays: 30 };',
  "jobs.addJob('neither', { schedule });",
  "jobs.addJob('both', { schedule, worker, entry: 'x.ts' });",
  "jobs.addJob('spread', { ...shared, schedule, entry: 'x.ts' });",
  "jobs.addJob('literal', { schedule, worker, flexibleWindowMinutes: 15 });",
].join('\n');

/** The compiler's messages, flattened, by the 1-based line of the app they are reported at. */
function messagesByLine(): Map<number, string> {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile;
  host.readFile = (file) => (file === APP_FILE ? APP : readFile(file));
  const fileExists = host.fileExists;
  host.fileExists = (file) => file === APP_FILE || fileExists(file);
  const program = ts.createProgram([APP_FILE], options, host);
  const source = program.getSourceFile(APP_FILE);
  const messages = new Map<number, string>();
  for (const d of program.getSemanticDiagnostics(source)) {
    const line = source!.getLineAndCharacterOfPosition(d.start ?? 0).line + 1;
    messages.set(line, `${messages.get(line) ?? ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}\n`);
  }
  return messages;
}

describe("the compiler's messages for a job's props", () => {
  const messages = messagesByLine();

  it('reports only the mistakes', () => {
    expect([...messages.keys()]).toEqual([8, 9, 10, 11]);
  });

  it('names both worker and entry when neither is given', () => {
    expect(messages.get(8)).toContain("Property 'entry' is missing");
    expect(messages.get(8)).toContain("Property 'worker' is missing");
  });

  it('says to give one of worker and entry when both are given', () => {
    expect(messages.get(9)).toContain(
      'give either worker (from addWorker) or entry (a file exporting defineJob), not both',
    );
  });

  it("names an old name's replacement, in a spread object and in a literal", () => {
    expect(messages.get(10)).toContain('renamed in 1.0 to timeout, a Duration');
    expect(messages.get(11)).toContain('renamed in 1.0 to timeWindow, TimeWindow.flexible(Duration.minutes(n))');
  });
});
