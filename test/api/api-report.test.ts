/**
 * The public API stays documented and clean. The committed API reports (api/*.api.md, written by `npm run api`,
 * checked against the code by `npm run api:check` in CI) mark a declaration without a comment `// (undocumented)`
 * and carry API Extractor's warnings (`// Warning: ...`: a TSDoc comment it cannot parse, a type the public API uses
 * but the entry point does not export). This test reads them and fails naming each undocumented exported symbol or
 * member and each warning, so that both stay at zero. API Extractor reads tsdoc.json for the tags it accepts (the
 * CDK's `@default`). It prints how many symbols each entry point exports.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportedSymbols, undocumented, warnings } from './api-report';

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

  it('reads the warnings of a report, above a declaration and in the list at its end', () => {
    const report = [
      '## API Report File for "x"',
      '```ts',
      '// @public',
      'export class JobsMonitoring extends Construct {',
      '    // Warning: (ae-forgotten-export) The symbol "JobsMonitoringProps" needs to be exported by the entry point index.d.ts',
      '    constructor(scope: Construct, id: string, props: JobsMonitoringProps);',
      '}',
      '',
      '// Warning: (tsdoc-malformed-inline-tag) Expecting a TSDoc tag starting with "{@"',
      '//',
      '// @public',
      'export class ValidationError extends Error {',
      '}',
      '',
      '// Warnings were encountered during analysis:',
      '//',
      '// .api-declarations/lib/metrics.d.ts:22:25 - (tsdoc-malformed-inline-tag) Expecting a TSDoc tag starting with "{@"',
      '',
      '```',
    ].join('\n');

    expect(warnings(report)).toEqual([
      'Warning: (ae-forgotten-export) The symbol "JobsMonitoringProps" needs to be exported by the entry point index.d.ts at constructor(scope: Construct, id: string, props: JobsMonitoringProps);',
      'Warning: (tsdoc-malformed-inline-tag) Expecting a TSDoc tag starting with "{@" at export class ValidationError extends Error {',
      '.api-declarations/lib/metrics.d.ts:22:25 - (tsdoc-malformed-inline-tag) Expecting a TSDoc tag starting with "{@"',
    ]);
    expect(warnings(report.replace(/\/\/ Warning.*\n|\/\/ \.api.*\n/g, ''))).toEqual([]);
  });

  it('has one report per entry point of package.json "exports"', () => {
    expect(REPORTS).toEqual(['cdk.api.md', 'operations.api.md', 'runtime.api.md', 'testing.api.md']);
  });

  it.each(REPORTS)('%s: every exported symbol and every public member has TSDoc', (file) => {
    const report = readFileSync(path.join(API, file), 'utf8');
    const missing = undocumented(report);
    console.log(`[api] ${file}: ${exportedSymbols(report).length} exported symbols`);

    expect(missing.symbols, `exported symbols of ${file} without TSDoc`).toEqual([]);
    expect(missing.members, `members of ${file} without TSDoc`).toEqual([]);
  });

  it.each(REPORTS)('%s: API Extractor has no warning', (file) => {
    const report = readFileSync(path.join(API, file), 'utf8');

    expect(warnings(report), `warnings in ${file} (fix the TSDoc, or export or narrow the type named)`).toEqual([]);
  });
});
