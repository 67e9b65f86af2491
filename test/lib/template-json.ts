/**
 * JSON read from a synthesized CloudFormation template, as the tests walk it. A test reads a known path
 * (`Properties.Target.Input`, `Properties.Roles.some(...)`), so every step is another node that can also be read as
 * the string or list it is there; a wrong path is undefined at run time and fails the assertion that reads it.
 * Unlike `any`, a node cannot be called or passed where a number or a typed object is expected.
 */
export type TemplateNode = string & readonly TemplateNode[] & { readonly [key: string]: TemplateNode };

/** One resource of the template's Resources section. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties: TemplateNode;
  readonly DeletionPolicy?: string;
}

/**
 * A template value as the string it resolves to, each reference written as a placeholder: `${Id}` for
 * `{ Ref: Id }`, `${Id.Attr}` for `{ 'Fn::GetAtt': [Id, Attr] }`, and `Fn::Join` joined. So
 * `JSON.parse(rendered(env.WORKERS))` reads the WORKERS a function gets, with `${QueueId}` for each queue URL.
 */
export function rendered(value: TemplateNode): string {
  const node: unknown = value;
  if (typeof node === 'string') return node;
  if (typeof node === 'number' || typeof node === 'boolean') return String(node);
  const intrinsic = node as { Ref?: string; 'Fn::GetAtt'?: string[]; 'Fn::Join'?: [string, TemplateNode[]] };
  if (intrinsic.Ref !== undefined) return `\${${intrinsic.Ref}}`;
  if (intrinsic['Fn::GetAtt'] !== undefined) return `\${${intrinsic['Fn::GetAtt'].join('.')}}`;
  if (intrinsic['Fn::Join'] !== undefined) {
    const [separator, parts] = intrinsic['Fn::Join'];
    return parts.map(rendered).join(separator);
  }
  throw new Error(`rendered: no rendering for ${JSON.stringify(node)}`);
}

/**
 * The bytes a value takes once deployed, each reference counted at `referenceBytes` (what it resolves to: a queue
 * URL, the longest here, is up to about 130 bytes; a name or an ARN less).
 */
export function deployedBytes(value: TemplateNode, referenceBytes: number): number {
  const placeholders = rendered(value).match(/\$\{[^}]+\}/g) ?? [];
  const literal = rendered(value).replace(/\$\{[^}]+\}/g, '');
  return Buffer.byteLength(literal) + placeholders.length * referenceBytes;
}

/** A function's environment as Lambda counts it against its 4 KB: every name and value. */
export function environmentBytes(variables: TemplateNode, referenceBytes: number): number {
  return Object.entries(variables).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + deployedBytes(value, referenceBytes),
    0,
  );
}
