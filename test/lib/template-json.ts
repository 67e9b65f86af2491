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
