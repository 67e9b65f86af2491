/**
 * The console's server: what the `occurrences console` command (and a test) starts. The app, its ports, the
 * read-unit meter and the DynamoDB reads the pages make.
 */
export { type ConsoleAppOptions, createConsoleApp } from './app';
export type {
  AuditLine,
  ConsoleDeps,
  ConsoleJobCatalogue,
  ConsoleOccurrenceReads,
  ReportObject,
  ReportReader,
  SeriesRange,
} from './deps';
export { type ReadCount, ReadMeter, type ReadUnitSource } from './read-units';
export { ConsoleSession } from './session';
export {
  CONSOLE_HOST,
  DEFAULT_CONSOLE_PORT,
  MAX_CONSOLE_CONNECTIONS,
  newToken,
  PortInUseError,
  type RunningConsole,
  type StartConsoleOptions,
  startConsole,
} from './start';
export { TIMELINE_ATTRIBUTES } from './timeline';
