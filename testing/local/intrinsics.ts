/**
 * CloudFormation's intrinsic functions, evaluated against the resources a local run created: what a function's
 * environment (`{ Ref: Queue }`, `Fn::GetAtt`, `Fn::Join` of a worker's queue URL, ...) becomes in the emulator.
 * Only what a template of this package's stacks uses and what follows from it: Ref, Fn::GetAtt, Fn::Join, Fn::Sub,
 * Fn::Select and Fn::Split, over resources, parameters' defaults and the pseudo parameters. Anything else is named in
 * an UnresolvedReference, so the caller can say which value to give instead.
 */

/** What a created resource answers to Ref and Fn::GetAtt. */
export interface PhysicalResource {
  readonly type: string;
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export interface ResolveContext {
  /** Created resources by logical id. */
  readonly resources: ReadonlyMap<string, PhysicalResource>;
  /** The template's resource types by logical id, to name what could not be resolved. */
  readonly types: ReadonlyMap<string, string>;
  /** AWS::Region, AWS::AccountId, ... and the parameters' defaults. */
  readonly parameters: Readonly<Record<string, string>>;
}

/** A reference the local run cannot answer: a resource it does not create, an attribute or a function it lacks. */
export class UnresolvedReference extends Error {
  override readonly name = 'UnresolvedReference';
}

/** The value with every intrinsic function evaluated; throws UnresolvedReference naming the first one it cannot. */
export function resolveValue(value: unknown, context: ResolveContext): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, context));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && (entries[0][0] === 'Ref' || entries[0][0].startsWith('Fn::'))) {
    const [name, argument] = entries[0];
    return intrinsic(name, argument, context);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveValue(v, context)]));
}

/** resolveValue for a place that takes a string (an environment variable, a queue attribute). */
export function resolveString(value: unknown, context: ResolveContext): string {
  const resolved = resolveValue(value, context);
  if (typeof resolved === 'string') return resolved;
  if (typeof resolved === 'number' || typeof resolved === 'boolean') return String(resolved);
  throw new UnresolvedReference(`expected a string, got ${JSON.stringify(resolved)}`);
}

function intrinsic(name: string, argument: unknown, context: ResolveContext): unknown {
  switch (name) {
    case 'Ref':
      return ref(String(argument), context);
    case 'Fn::GetAtt': {
      const [id, attribute] = typeof argument === 'string' ? splitOnce(argument, '.') : (argument as [string, unknown]);
      return getAtt(id, String(resolveValue(attribute, context)), context);
    }
    case 'Fn::Join': {
      const [delimiter, list] = argument as [string, unknown];
      const items = resolveValue(list, context);
      if (!Array.isArray(items)) throw new UnresolvedReference('Fn::Join of something that is not a list');
      return items.map((item) => String(item)).join(delimiter);
    }
    case 'Fn::Sub':
      return sub(argument, context);
    case 'Fn::Select': {
      const [index, list] = argument as [unknown, unknown];
      const items = resolveValue(list, context);
      const i = Number(resolveValue(index, context));
      if (!Array.isArray(items) || !Number.isInteger(i) || i < 0 || i >= items.length)
        throw new UnresolvedReference(`Fn::Select ${i} of ${JSON.stringify(items)}`);
      return items[i];
    }
    case 'Fn::Split': {
      const [delimiter, text] = argument as [string, unknown];
      return String(resolveValue(text, context)).split(delimiter);
    }
    default:
      throw new UnresolvedReference(`${name}, which the local run does not evaluate`);
  }
}

function ref(id: string, context: ResolveContext): string {
  if (id in context.parameters) return context.parameters[id];
  const resource = context.resources.get(id);
  if (resource !== undefined) return resource.ref;
  throw new UnresolvedReference(`Ref to ${describeId(id, context)}`);
}

function getAtt(id: string, attribute: string, context: ResolveContext): string {
  const resource = context.resources.get(id);
  const value = resource?.attributes[attribute];
  if (value !== undefined) return value;
  throw new UnresolvedReference(
    resource === undefined
      ? `Fn::GetAtt ${id}.${attribute} of ${describeId(id, context)}`
      : `Fn::GetAtt ${id}.${attribute}: the local ${resource.type} has ${Object.keys(resource.attributes).join(', ') || 'no attributes'}`,
  );
}

function sub(argument: unknown, context: ResolveContext): string {
  const [template, variables] = typeof argument === 'string' ? [argument, {}] : (argument as [string, object]);
  const own = resolveValue(variables, context) as Record<string, unknown>;
  return template.replace(/\$\{([^}]*)\}/g, (_whole, name: string) => {
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    if (name in own) return String(own[name]);
    const [id, attribute] = splitOnce(name, '.');
    return attribute === undefined ? ref(id, context) : getAtt(id, attribute, context);
  });
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

function describeId(id: string, context: ResolveContext): string {
  const type = context.types.get(id);
  return type === undefined
    ? `${id}, which is not in the template`
    : `${id} (${type}), which the local run does not create`;
}
