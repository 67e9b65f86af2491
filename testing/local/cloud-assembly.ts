/**
 * Reads a cloud assembly (`cdk synth`'s output folder): its stacks from manifest.json, nested stage assemblies
 * included, and the template of the one to run.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { AssemblyError } from '../errors';

export interface Template {
  readonly Resources?: Record<string, TemplateResource>;
  readonly Parameters?: Record<string, { readonly Default?: unknown }>;
  readonly Outputs?: Record<string, unknown>;
}

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface StackArtifact {
  /** The CloudFormation stack name. */
  readonly stackName: string;
  /** The artifact's id in the manifest, and its display name (`Stage/Stack` inside a stage). */
  readonly artifactId: string;
  readonly displayName: string;
  /** The folder the template and its assets are in (a stage's own assembly folder). */
  readonly assemblyDir: string;
  readonly templatePath: string;
}

interface Manifest {
  readonly artifacts?: Record<
    string,
    { readonly type?: string; readonly displayName?: string; readonly properties?: Record<string, unknown> }
  >;
}

/** Every stack of the assembly and of the stage assemblies nested in it. */
export function listStacks(assemblyDir: string): StackArtifact[] {
  const manifestPath = path.join(assemblyDir, 'manifest.json');
  if (!existsSync(manifestPath))
    throw new AssemblyError(assemblyDir, [
      'no manifest.json here: is this the output folder of `cdk synth` (cdk.out by default)?',
    ]);
  const manifest = readJson<Manifest>(manifestPath, assemblyDir);
  return Object.entries(manifest.artifacts ?? {}).flatMap(([id, artifact]): StackArtifact[] => {
    const properties = artifact.properties ?? {};
    if (artifact.type === 'cdk:cloud-assembly' && typeof properties.directoryName === 'string')
      return listStacks(path.join(assemblyDir, properties.directoryName));
    if (artifact.type !== 'aws:cloudformation:stack' || typeof properties.templateFile !== 'string') return [];
    return [
      {
        stackName: typeof properties.stackName === 'string' ? properties.stackName : id,
        artifactId: id,
        displayName: artifact.displayName ?? id,
        assemblyDir,
        templatePath: path.join(assemblyDir, properties.templateFile),
      },
    ];
  });
}

/**
 * The stack to run and its template: the one named (by stack name, artifact id or display name), or else the only
 * stack with a Scheduler schedule, or else the only stack.
 */
export function readStack(assemblyDir: string, stackName?: string): { stack: StackArtifact; template: Template } {
  const stacks = listStacks(assemblyDir);
  const names = stacks.map((s) => s.displayName).join(', ') || 'none';
  const templateOf = (stack: StackArtifact) => readJson<Template>(stack.templatePath, assemblyDir);
  if (stackName !== undefined) {
    const stack = stacks.find((s) => [s.stackName, s.artifactId, s.displayName].includes(stackName));
    if (stack === undefined) throw new AssemblyError(assemblyDir, [`no stack ${stackName}; the stacks are: ${names}`]);
    return { stack, template: templateOf(stack) };
  }
  if (stacks.length === 1) return { stack: stacks[0], template: templateOf(stacks[0]) };
  const scheduled = stacks
    .map((stack) => ({ stack, template: templateOf(stack) }))
    .filter(({ template }) =>
      Object.values(template.Resources ?? {}).some((r) => r.Type === 'AWS::Scheduler::Schedule'),
    );
  if (scheduled.length === 1) return scheduled[0];
  throw new AssemblyError(assemblyDir, [
    `${stacks.length === 0 ? 'no stacks' : `${scheduled.length} stacks with schedules`}; name the one to run with stackName (the stacks are: ${names})`,
  ]);
}

function readJson<T>(file: string, assemblyDir: string): T {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (error) {
    throw new AssemblyError(assemblyDir, [`cannot read ${file}: ${(error as Error).message}`]);
  }
}
