/**
 * One JSON object per line, which CloudWatch Logs Insights can query by field.
 */
import type { LogFields, Logger } from '../protocol/ports';

export function jsonLogger(base: LogFields = {}, write: (line: string) => void = (l) => console.log(l)): Logger {
  const emit = (level: string) => (message: string, fields?: LogFields) =>
    write(JSON.stringify({ level, message, ...base, ...fields, time: new Date().toISOString() }));
  return { info: emit('INFO'), warn: emit('WARN'), error: emit('ERROR') };
}
