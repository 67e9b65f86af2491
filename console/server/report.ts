/**
 * GET /api/report: a committed report's bytes, streamed from the bucket as a download (Content-Disposition
 * attachment, named as its key ends), never shown inline: a report is the job's output, not the console's page.
 * Only a key where the worker commits this occurrence's report is read (`reports/{jobId}[/{scheduleKey}]/<name>`,
 * reportKeyOf): a row whose reportKey names anything else in the bucket is refused, whatever IAM would allow.
 */
import { Readable } from 'node:stream';
import { type OccurrenceKey, REPORT_KEY_PREFIX } from '../../functions/protocol/occurrence';
import type { ConsoleDeps } from './deps';
import { HttpError } from './http-errors';
import { rowOf } from './occurrence';

export async function downloadReport(deps: ConsoleDeps, key: OccurrenceKey): Promise<Response> {
  if (deps.reports === undefined)
    throw new HttpError(
      404,
      'the report bucket is unknown: start the console with --bucket (or a stack that names it)',
    );
  const row = await rowOf(deps, key);
  const reportKey = row.reportKey;
  if (typeof reportKey !== 'string')
    throw new HttpError(404, `the occurrence has no committed report (it is ${String(row.status)})`);
  if (!isOwnReportKey(key, reportKey))
    throw new HttpError(
      403,
      `the occurrence's reportKey ${JSON.stringify(reportKey)} is outside its reports ` +
        `(${ownReportPrefix(key)}…): not downloaded`,
    );
  const object = await deps.reports.open(reportKey);
  if (object === undefined)
    throw new HttpError(404, `the report ${reportKey} is not in the bucket (expired or deleted)`);
  const body =
    object.body instanceof Readable ? (Readable.toWeb(object.body) as ReadableStream<Uint8Array>) : object.body;
  const name = (reportKey.split('/').at(-1) ?? 'report').replace(/[^A-Za-z0-9._:+-]/g, '_');
  const headers: Record<string, string> = {
    'Content-Type': object.contentType ?? 'application/octet-stream',
    'Content-Disposition': `attachment; filename="${name}"`,
  };
  if (object.contentLength !== undefined) headers['Content-Length'] = String(object.contentLength);
  return new Response(body, { status: 200, headers });
}

/** Where this occurrence's report may be: `reports/{jobId}/` or `reports/{jobId}/{scheduleKey}/`. */
const ownReportPrefix = (key: OccurrenceKey): string =>
  `${REPORT_KEY_PREFIX}${key.jobId}/${key.scheduleKey === undefined ? '' : `${key.scheduleKey}/`}`;

/** A key directly under the occurrence's own prefix: no further folder, no `..`. */
export function isOwnReportKey(key: OccurrenceKey, reportKey: string): boolean {
  const prefix = ownReportPrefix(key);
  if (!reportKey.startsWith(prefix)) return false;
  const name = reportKey.slice(prefix.length);
  return name !== '' && !name.includes('/') && name !== '..' && name !== '.';
}
