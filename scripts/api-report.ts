/**
 * The API reports (api/<entry>.api.md): API Extractor run once per entry point of package.json "exports", on
 * declarations built for it into .api-declarations/ (not dist/, which `npm pack` owns).
 *
 *   npm run api         build the declarations, update every report (commit the diff with the change)
 *   npm run api:check   build the declarations, fail when a report differs from what the code exports (CI)
 *
 * `.` and `./cdk` are one entry point (the same declarations): one report, api/cdk.api.md.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const ROOT = path.resolve(__dirname, '..');
const DECLARATIONS = '.api-declarations';

/** The report's name for each entry point: `./runtime` -> runtime, `.` -> cdk (the package's main entry is the cdk one). */
export function reportName(entry: string): string {
  return entry === '.' ? 'cdk' : entry.replace(/^\.\//, '');
}

/** Each entry point's declarations file, once per file: `./dist/lib/index.d.ts` for both `.` and `./cdk`. */
export function entryPoints(exportsMap: Record<string, unknown>): Array<{ name: string; types: string }> {
  const seen = new Set<string>();
  const entries: Array<{ name: string; types: string }> = [];
  for (const [entry, target] of Object.entries(exportsMap)) {
    const types = typeof target === 'object' && target !== null ? (target as { types?: unknown }).types : undefined;
    if (typeof types !== 'string' || seen.has(types)) continue;
    seen.add(types);
    entries.push({ name: reportName(entry === '.' ? './cdk' : entry), types });
  }
  return entries;
}

function main(): number {
  const check = process.argv.includes('--check');
  rmSync(path.join(ROOT, DECLARATIONS), { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      '-p',
      'tsconfig.build.json',
      '--emitDeclarationOnly',
      '--outDir',
      DECLARATIONS,
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const base = ExtractorConfig.loadFile(path.join(ROOT, 'api-extractor.json'));
  const failed: string[] = [];
  for (const { name, types } of entryPoints(manifest.exports)) {
    const declarations = path.join(ROOT, types.replace(/^\.\/dist\//, `${DECLARATIONS}/`));
    const config = ExtractorConfig.prepare({
      configObject: {
        ...base,
        mainEntryPointFilePath: declarations,
        apiReport: { ...base.apiReport, enabled: true, reportFileName: `${name}.api.md` },
      },
      configObjectFullPath: path.join(ROOT, 'api-extractor.json'),
      packageJsonFullPath: path.join(ROOT, 'package.json'),
    });
    const result = Extractor.invoke(config, { localBuild: !check, showVerboseMessages: false });
    if (check && result.apiReportChanged) failed.push(`api/${name}.api.md`);
    else if (!result.succeeded) failed.push(`${name}: ${result.errorCount} errors, ${result.warningCount} warnings`);
  }
  if (failed.length > 0) {
    console.error(
      check
        ? `the public API differs from its report: ${failed.join(', ')}. Run npm run api and commit the reports if the change is meant.`
        : `API Extractor failed: ${failed.join('; ')}`,
    );
    return 1;
  }
  console.log(check ? 'the API reports match the code' : 'the API reports under api/ are up to date');
  return 0;
}

if (require.main === module) process.exitCode = main();
