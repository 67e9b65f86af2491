/**
 * Every exported symbol of the package's entry points has TSDoc. The committed API reports (api/*.api.md, written by
 * `npm run api`, checked against the code by `npm run api:check` in CI) mark a declaration without a comment
 * `// (undocumented)`; this test reads them and fails naming each exported symbol so marked. Members without a
 * comment (a property, a constructor) are listed too, without failing: they are worth a comment where the name says
 * too little. It prints how many symbols each entry point exports.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportedSymbols, undocumented } from './api-report';

const API = path.resolve(__dirname, '..', '..', 'api');

const REPORTS = readdirSync(API)
  .filter((file) => file.endsWith('.api.md'))
  .sort();

describe('the API reports (api/*.api.md)', () => {
  it('reads which exported symbols and members a report marks undocumented', () => {
    const report = [
      '## API Report File for "x"',
      '```ts',
      '// @public',
      'export function defineJob(definition: JobDefinition): JobHandler;',
      '',
      '// @public (undocumented)',
      'export interface Logger {',
      '    // (undocumented)',
      '    info(message: string): void;',
      '    warn(message: string): void;',
      '}',
      '',
      '// @public (undocumented)',
      'export const OccurrenceStatus: {',
      '    readonly PENDING: "PENDING";',
      '};',
      '',
      '// @public (undocumented)',
      'export type OccurrenceStatus = (typeof OccurrenceStatus)[keyof typeof OccurrenceStatus];',
      '',
      '// @public',
      'export abstract class ScheduledJobsError extends Error {',
      '    // (undocumented)',
      '    abstract readonly name: string;',
      '}',
      '```',
    ].join('\n');

    expect(exportedSymbols(report)).toEqual(['Logger', 'OccurrenceStatus', 'ScheduledJobsError', 'defineJob']);
    expect(undocumented(report)).toEqual({
      symbols: ['Logger', 'OccurrenceStatus'],
      members: ['Logger.info', 'ScheduledJobsError.name'],
    });
  });

  it('has one report per entry point of package.json "exports"', () => {
    expect(REPORTS).toEqual(['cdk.api.md', 'operations.api.md', 'runtime.api.md', 'testing.api.md']);
  });

  it.each(REPORTS)('%s: every exported symbol has TSDoc', (file) => {
    const report = readFileSync(path.join(API, file), 'utf8');
    const symbols = exportedSymbols(report);
    const missing = undocumented(report);
    console.log(
      `[api] ${file}: ${symbols.length} exported symbols, ${missing.symbols.length} undocumented; ` +
        `${missing.members.length} members without a comment${missing.members.length > 0 ? `: ${missing.members.join(', ')}` : ''}`,
    );

    expect(missing.symbols, `exported symbols of ${file} without TSDoc`).toEqual([]);
  });
});
