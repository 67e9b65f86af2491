/**
 * The shared shape of the stack's Lambda functions: newest Node.js runtime (or the app's choice) on Graviton, bundled locally by esbuild
 * (no Docker), and a log group of its own so that log retention is set rather than forever.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct, IConstruct } from 'constructs';
import { quoteValue } from '../functions/protocol/quote-value';
import { BUNDLED_HANDLER, DeferredBundledCode } from './deferred-bundling';
import { encryptionKeyOf } from './encryption';
import { handlerEntry } from './handler-entry';

/** The package every SDK client imports its default credential provider from; the bundles alias it. */
export const CREDENTIAL_CHAIN = '@aws-sdk/credential-provider-node';

/** The default runtime: the newest Node.js Lambda runs. */
export const FUNCTION_RUNTIME = lambda.Runtime.NODEJS_24_X;
/** The oldest Node.js the functions are built for (package.json's engines). */
export const LOWEST_NODE_MAJOR = 20;

/** A `runtime` that is not a Node.js runtime the functions support, named by `where`. */
export function runtimeProblems(where: string, runtime: unknown): string[] {
  if (runtime === undefined) return [];
  if (!(runtime instanceof lambda.Runtime))
    return [`${where}: must be a lambda.Runtime such as lambda.Runtime.NODEJS_22_X, got ${quoteValue(runtime)}`];
  const major = /^nodejs(\d+)\.x$/.exec(runtime.name)?.[1];
  if (runtime.family !== lambda.RuntimeFamily.NODEJS || major === undefined)
    return [
      `${where}: must be a Node.js runtime (nodejs<version>.x), got ${runtime.name}: the functions are TypeScript bundled for Node.js`,
    ];
  if (Number(major) < LOWEST_NODE_MAJOR)
    return [
      `${where}: must be Node.js ${LOWEST_NODE_MAJOR} or newer (lambda.Runtime.NODEJS_${LOWEST_NODE_MAJOR}_X), got ${runtime.name}: ` +
        'the functions and the AWS SDK they bundle need it',
    ];
  return [];
}

/** The stack-wide runtime of the functions built under a scope (ScheduledJobsProps.runtime). */
const runtimesByScope = new WeakMap<IConstruct, lambda.Runtime>();

/** Makes `runtime` the runtime of every function built under `scope` that is not given one of its own. */
export function useRuntime(scope: IConstruct, runtime: lambda.Runtime): void {
  runtimesByScope.set(scope, runtime);
}

function runtimeOf(scope: IConstruct): lambda.Runtime {
  const scopes = scope.node.scopes;
  for (let i = scopes.length - 1; i >= 0; i--) {
    const runtime = runtimesByScope.get(scopes[i]);
    if (runtime !== undefined) return runtime;
  }
  return FUNCTION_RUNTIME;
}
export const FUNCTION_ARCHITECTURE = lambda.Architecture.ARM_64;
export const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;
/** Lambda's START/END/REPORT lines off (WARN), the functions' INFO lines on: see FunctionLogging. */
export const DEFAULT_FUNCTION_LOGGING = {
  systemLogLevel: lambda.SystemLogLevel.WARN,
  applicationLogLevel: lambda.ApplicationLogLevel.INFO,
} as const;

/**
 * How every function is bundled. Exported so that the cold-load benchmark (bench/cold-load.ts) bundles its handlers
 * and anchors exactly as the stack does.
 */
export const JOB_FUNCTION_BUNDLING = {
  minify: true,
  sourceMap: true,
  // Stack traces need the map's mappings, not a copy of every source: without the sources the trigger's map is 0.75
  // MB instead of 2.28 MB, and Node (--enable-source-maps) parses it at every cold start (measured: 18.5 M fewer
  // instructions for the trigger, npm run bench:cold-load).
  sourcesContent: false,
  // Ship the SDK versions the functions were tested with (package-lock.json) instead of the runtime's copy,
  // which changes under us; the conditional S3 write and the lease updates depend on recent SDK behaviour.
  bundleAwsSDK: true,
  // Prefer the packages' ES modules, which esbuild can tree-shake: the SDK, Powertools and zod ship both, and
  // their CommonJS builds would be bundled whole (measured: the trigger 1,096 KB with them, 440 KB without).
  mainFields: ['module', 'main'],
  // A worker's import of the package's runtime entry resolves, for the bundler only, to the package's TypeScript
  // sources (the "scheduled-jobs-source" condition of its exports map), for the same reason: tree-shaking. Custom
  // conditions replace esbuild's default `module` condition, so it is named again.
  // The SDK clients import the whole credential chain (SSO, INI, web identity, metadata, and the STS and SSO clients
  // of @aws-sdk/nested-clients) whatever they are given; in Lambda the credentials are in the environment, so the
  // chain is the environment's alone (functions/aws/env-credentials.ts): 106 to 137 KB less per bundle.
  esbuildArgs: {
    '--conditions': 'scheduled-jobs-source,module',
    [`--alias:${CREDENTIAL_CHAIN}`]: handlerEntry('aws/env-credentials'),
  },
  forceDockerBundling: false,
} satisfies nodejs.BundlingOptions;

/**
 * The log levels of a function, in Lambda's JSON log format. Lambda drops what is below them before it is written,
 * so nothing below pays for ingestion.
 */
export interface FunctionLogging {
  /**
   * Lambda's own lines: START, END and REPORT of each invocation (DEBUG and INFO), platform warnings and errors.
   * At WARN a happy invocation writes none of them: three lines per invocation, more than the one line a happy-path
   * occurrence writes itself, that repeat what Lambda's metrics (Invocations, Duration, Errors) already count; a
   * timeout or a crash still writes its own line at WARN or ERROR.
   *
   * @default lambda.SystemLogLevel.WARN
   */
  readonly systemLogLevel?: lambda.SystemLogLevel;
  /**
   * The functions' own lines (Powertools Logger reads it as AWS_LAMBDA_LOG_LEVEL). At INFO a happy-path occurrence
   * writes one line, the worker's outcome; DEBUG adds each step (the trigger's record, the claim, the commit, the
   * announcement); WARN leaves only what needs a look.
   *
   * @default lambda.ApplicationLogLevel.INFO
   */
  readonly applicationLogLevel?: lambda.ApplicationLogLevel;
}

export interface JobFunctionProps
  extends Omit<
    nodejs.NodejsFunctionProps,
    'entry' | 'runtime' | 'bundling' | 'logGroup' | 'logRetention' | 'timeout' | 'role'
  > {
  readonly entry: string;
  /** Default: the ScheduledJobs' runtime (useRuntime), else FUNCTION_RUNTIME. */
  readonly runtime?: lambda.Runtime;
  /**
   * The function's execution role; default one of its own. A given role gets the same statements (the log group's,
   * the grants), unless it is imported immutable: then they are the role owner's to add (docs/platform.md).
   */
  readonly role?: iam.IRole;
  /** The user's log group; default: one of the function's own, kept for `logRetention`. */
  readonly logGroup?: logs.ILogGroup;
  /** Default LOG_RETENTION. Not through the deprecated logRetention of Function, which adds a custom resource. */
  readonly logRetention?: logs.RetentionDays;
  /** Seconds; may be a token (a worker's timeout is derived from the jobs added to it later). */
  readonly timeoutSeconds: number;
  readonly logRemovalPolicy?: RemovalPolicy;
  /** Laid over JOB_FUNCTION_BUNDLING: a user's worker may add loaders, externals, banners. */
  readonly bundling?: nodejs.BundlingOptions;
  /** Default: system WARN, application INFO, JSON format. */
  readonly logging?: FunctionLogging;
}

export function jobFunction(scope: Construct, id: string, props: JobFunctionProps): nodejs.NodejsFunction {
  const {
    entry,
    timeoutSeconds,
    logRemovalPolicy,
    environment,
    bundling,
    architecture,
    logRetention,
    logging,
    runtime: givenRuntime,
    role: givenRole,
    ...rest
  } = props;
  const runtime = givenRuntime ?? runtimeOf(scope);
  const logGroup =
    props.logGroup ??
    new logs.LogGroup(scope, `${id}Logs`, {
      retention: logRetention ?? LOG_RETENTION,
      removalPolicy: logRemovalPolicy,
      encryptionKey: encryptionKeyOf(scope),
    });
  // A role of its own instead of AWSLambdaBasicExecutionRole, whose log permissions reach every log group in the
  // account: this one may write only to the function's own log group, which exists before the function does.
  const role =
    givenRole ??
    new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${id} function`,
    });
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [logGroup.logGroupArn],
    }),
  );
  if (props.vpc !== undefined) {
    // What AWSLambdaVPCAccessExecutionRole grants, without its logs:* on every log group: the function's network
    // interfaces in the VPC. These actions have no resource-level permissions.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    );
  }
  return new nodejs.NodejsFunction(scope, id, {
    role,
    memorySize: 256,
    ...rest,
    runtime,
    architecture: architecture ?? FUNCTION_ARCHITECTURE,
    timeout: Duration.seconds(timeoutSeconds),
    logGroup,
    // JSON, so that Lambda filters by level (a level needs the JSON format) and Logs Insights queries by field.
    loggingFormat: lambda.LoggingFormat.JSON,
    systemLogLevelV2: logging?.systemLogLevel ?? DEFAULT_FUNCTION_LOGGING.systemLogLevel,
    applicationLogLevelV2: logging?.applicationLogLevel ?? DEFAULT_FUNCTION_LOGGING.applicationLogLevel,
    environment: { ...environment, NODE_OPTIONS: withSourceMaps(environment?.NODE_OPTIONS) },
    // Bundled when the template is resolved, after every construct's validation: deferred-bundling.ts.
    code: new DeferredBundledCode({
      entry,
      runtime,
      architecture: architecture ?? FUNCTION_ARCHITECTURE,
      bundling: withStackBundling(bundling),
      depsLockFilePath: rest.depsLockFilePath,
      projectRoot: rest.projectRoot,
    }),
    handler: BUNDLED_HANDLER,
  });
}

/**
 * The user's NODE_OPTIONS with `--enable-source-maps` added, so that stack traces point into the TypeScript sources
 * through the bundled source map and the user's own options (a heap size, say) are kept.
 */
export function withSourceMaps(nodeOptions: string | undefined): string {
  const given = nodeOptions?.trim() ?? '';
  if (given.split(/\s+/).includes('--enable-source-maps')) return given;
  return given === '' ? '--enable-source-maps' : `${given} --enable-source-maps`;
}

/**
 * A function's bundling options over the stack's. Its esbuild arguments are merged rather than replaced, and its own
 * `--conditions` are added to the stack's: without the stack's conditions a worker would bundle the package's
 * compiled CommonJS, three times larger (docs/packaging.md).
 */
export function withStackBundling(bundling: nodejs.BundlingOptions = {}): nodejs.BundlingOptions {
  const stackArgs = JOB_FUNCTION_BUNDLING.esbuildArgs;
  const own = bundling.esbuildArgs ?? {};
  const conditions = [stackArgs['--conditions'], own['--conditions']].filter((c) => typeof c === 'string' && c !== '');
  return {
    ...JOB_FUNCTION_BUNDLING,
    ...bundling,
    esbuildArgs: { ...stackArgs, ...own, '--conditions': conditions.join(',') },
  };
}

/** One explicit grant: these actions on these resources, added to the function's own role. */
export function allow(fn: lambda.IFunction, actions: string[], resources: string[]): void {
  fn.addToRolePolicy(new iam.PolicyStatement({ actions, resources }));
}
