/**
 * Reads an API report (api/*.api.md, written by API Extractor): its exported symbols, the declarations it marks
 * `// (undocumented)` and its warnings. test/api/api-report.test.ts uses it.
 */

/** One declaration of a report: its name, the exported symbol it belongs to (itself at the top level), documented or not. */
export interface Declaration {
  readonly symbol: string;
  readonly name: string;
  readonly topLevel: boolean;
  readonly documented: boolean;
}

const NAME =
  /^\s*(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:readonly\s+)?(?:static\s+)?(?:(?:class|interface|type|const|function|enum|namespace|let|var)\s+)?([A-Za-z_$][\w$]*)/;

/** The declarations of an API report's code block, top-level exports and their members. */
export function declarationsOf(report: string): Declaration[] {
  const body = report.slice(report.indexOf('```ts'), report.lastIndexOf('```'));
  const lines = body.split('\n');
  const found: Declaration[] = [];
  let symbol = '';
  let undocumented = false;
  for (const line of lines) {
    if (line.trim() === '// (undocumented)' || line.trim() === '// @public (undocumented)') {
      undocumented = true;
      continue;
    }
    if (line.trim().startsWith('//') || line.trim() === '') continue;
    const topLevel = line.startsWith('export ');
    const member = /^ {4}\S/.test(line) && !line.trim().startsWith('}');
    if (!topLevel && !member) {
      undocumented = false;
      continue;
    }
    const name = NAME.exec(line)?.[1] ?? line.trim();
    if (topLevel) symbol = name;
    found.push({ symbol, name: topLevel ? name : `${symbol}.${name}`, topLevel, documented: !undocumented });
    undocumented = false;
  }
  return found;
}

/** The exported symbols of a report, each once (a const and the type of the same name are one symbol). */
export function exportedSymbols(report: string): string[] {
  return [
    ...new Set(
      declarationsOf(report)
        .filter((d) => d.topLevel)
        .map((d) => d.name),
    ),
  ].sort();
}

/** The exported symbols (top level) and the members a report marks `(undocumented)`. */
export function undocumented(report: string): { symbols: string[]; members: string[] } {
  const marked = declarationsOf(report).filter((d) => !d.documented);
  return {
    symbols: [...new Set(marked.filter((d) => d.topLevel).map((d) => d.name))].sort(),
    members: marked.filter((d) => !d.topLevel).map((d) => d.name),
  };
}

/**
 * Every warning a report carries, as written: the `// Warning: (code) ...` lines above a declaration (each followed by
 * ` at <the declaration's first line>`), and the entries of the "Warnings were encountered during analysis" list at
 * its end (`// path:line:col - (code) ...`).
 */
export function warnings(report: string): string[] {
  const lines = report.split('\n').map((line) => line.trim());
  const found: string[] = [];
  lines.forEach((line, i) => {
    if (/^\/\/ \S+:\d+:\d+ - \(/.test(line)) found.push(line.slice(3));
    if (!/^\/\/ Warning: \(/.test(line)) return;
    const declaration = lines.slice(i + 1).find((next) => next !== '' && !next.startsWith('//'));
    found.push(`${line.slice(3)} at ${declaration ?? 'the end of the report'}`);
  });
  return found;
}
