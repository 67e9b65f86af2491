/**
 * Many Lambda functions in one Node process, each seeing its own environment and writing to its own log, as each
 * would in its own container.
 *
 * Every invocation runs inside an AsyncLocalStorage context that carries its function's environment and log sink.
 * While a sandbox is open, `process.env` is a view that answers from the current function's variables first (and
 * keeps a function's own writes to itself), and what a function writes to `process.stdout`/`process.stderr` or
 * through `console` goes to its sink; outside any function all of them behave as before. So concurrent invocations of different functions never
 * see each other's variables, also after an await, and a handler that reads its environment at its first call, or a
 * job that reads it on every run, reads its own. Each bundle is loaded as a module instance of its own per function
 * (see load), so the clients and handlers a bundle caches at module level are per function and per run.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { format } from 'node:util';

/** Variables of one function; undefined hides a variable of the process (AWS_PROFILE, say). */
export type FunctionEnv = Readonly<Record<string, string | undefined>>;

export type OutputSink = (text: string, stream: 'stdout' | 'stderr') => void;

interface FunctionScope {
  readonly name: string;
  readonly env: Map<string, string | undefined>;
  readonly output: OutputSink;
}

const scopes = new AsyncLocalStorage<FunctionScope>();
let openSandboxes = 0;
let restore: (() => void) | undefined;

export class FunctionSandbox {
  private closed = false;

  private constructor() {}

  /** Installs the environment view and the output capture (once per process, however many sandboxes are open). */
  static open(): FunctionSandbox {
    if (openSandboxes === 0) restore = install();
    openSandboxes += 1;
    return new FunctionSandbox();
  }

  /** Uninstalls them when the last open sandbox closes. Invocations still running then see the process as it is. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    openSandboxes -= 1;
    if (openSandboxes === 0) {
      restore?.();
      restore = undefined;
    }
  }

  /** Runs `fn` as function `name`: it and everything it starts (awaits, timers) see `env` and write to `output`. */
  run<T>(name: string, env: FunctionEnv, output: OutputSink, fn: () => T): T {
    return scopes.run({ name, env: new Map(Object.entries(env)), output }, fn);
  }

  /**
   * A fresh module instance of a CommonJS bundle, loaded as function `name` (its top level sees the function's
   * environment): taken out of require's cache before and after, so two functions built from one asset, or two
   * runs in one process, share no module state.
   */
  load(name: string, env: FunctionEnv, output: OutputSink, file: string): Record<string, unknown> {
    const load = createRequire(file);
    return this.run(name, env, output, () => {
      delete load.cache[file];
      try {
        return load(file) as Record<string, unknown>;
      } finally {
        delete load.cache[file];
      }
    });
  }
}

/** The name of the function whose invocation is running here, if any. */
export function currentFunction(): string | undefined {
  return scopes.getStore()?.name;
}

function install(): () => void {
  const env = process.env;
  process.env = environmentView(env);
  const unpatch = [
    captureWrites(process.stdout, 'stdout'),
    captureWrites(process.stderr, 'stderr'),
    // A test runner's console (vitest's) may not write to process.stdout: a function's console calls go to its sink.
    ...(['log', 'info', 'debug'] as const).map((method) => captureConsole(method, 'stdout')),
    ...(['warn', 'error'] as const).map((method) => captureConsole(method, 'stderr')),
  ];
  return () => {
    process.env = env;
    for (const undo of unpatch) undo();
  };
}

/** `process.env` answered from the current function's variables first, the process's otherwise. */
function environmentView(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const own = (key: string | symbol) => {
    const scope = scopes.getStore();
    return scope !== undefined && typeof key === 'string' && scope.env.has(key) ? scope : undefined;
  };
  return new Proxy(base, {
    get: (target, key) => {
      const scope = own(key);
      return scope === undefined ? Reflect.get(target, key) : scope.env.get(key as string);
    },
    has: (target, key) => {
      const scope = own(key);
      return scope === undefined ? Reflect.has(target, key) : scope.env.get(key as string) !== undefined;
    },
    set: (target, key, value) => {
      const scope = scopes.getStore();
      if (scope === undefined || typeof key !== 'string') return Reflect.set(target, key, value);
      scope.env.set(key, String(value));
      return true;
    },
    deleteProperty: (target, key) => {
      const scope = scopes.getStore();
      if (scope === undefined || typeof key !== 'string') return Reflect.deleteProperty(target, key);
      scope.env.set(key, undefined);
      return true;
    },
    ownKeys: (target) => {
      const scope = scopes.getStore();
      const keys = Reflect.ownKeys(target);
      if (scope === undefined) return keys;
      const visible = new Set(
        keys.filter((k) => typeof k !== 'string' || scope.env.get(k) !== undefined || !scope.env.has(k)),
      );
      for (const [k, v] of scope.env) if (v !== undefined) visible.add(k);
      return [...visible];
    },
    getOwnPropertyDescriptor: (target, key) => {
      const scope = own(key);
      if (scope === undefined) return Reflect.getOwnPropertyDescriptor(target, key);
      const value = scope.env.get(key as string);
      return value === undefined ? undefined : { value, writable: true, enumerable: true, configurable: true };
    },
  });
}

function captureConsole(method: 'log' | 'info' | 'debug' | 'warn' | 'error', stream: 'stdout' | 'stderr'): () => void {
  const original = console[method];
  console[method] = (...args: unknown[]) => {
    const scope = scopes.getStore();
    if (scope === undefined) original.apply(console, args);
    else scope.output(`${format(...args)}\n`, stream);
  };
  return () => {
    console[method] = original;
  };
}

/** A stream's writes made inside a function go to that function's sink; the others go where they went. */
function captureWrites(stream: NodeJS.WriteStream, name: 'stdout' | 'stderr'): () => void {
  const original = stream.write;
  const patched = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    const scope = scopes.getStore();
    if (scope === undefined) return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    const encoding = typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : undefined;
    scope.output(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString(encoding), name);
    const callback = rest.find((r): r is () => void => typeof r === 'function');
    callback?.();
    return true;
  };
  stream.write = patched as typeof stream.write;
  return () => {
    stream.write = original;
  };
}
