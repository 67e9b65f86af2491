/**
 * The Logger port on Powertools Logger: one JSON object per line, with Lambda's context keys, which CloudWatch Logs
 * Insights can query by field. Per-occurrence keys (jobId, scheduledTime, leaseId, attempt) travel in each call's
 * fields, never through appendKeys: a worker batch runs several occurrences at once in one process, so a global
 * key would leak from one occurrence's lines into another's.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { METRICS_SERVICE } from '../protocol/metric-names';
import type { LogFields, Logger } from '../protocol/ports';

export function powertoolsLogger(fn: string): Logger & { readonly powertools: PowertoolsLogger } {
  const logger = new PowertoolsLogger({ serviceName: METRICS_SERVICE, persistentKeys: { fn } });
  return {
    powertools: logger,
    debug: (message: string, fields?: LogFields) => logger.debug(message, { ...fields }),
    info: (message: string, fields?: LogFields) => logger.info(message, { ...fields }),
    warn: (message: string, fields?: LogFields) => logger.warn(message, { ...fields }),
    error: (message: string, fields?: LogFields) => logger.error(message, { ...fields }),
  };
}
