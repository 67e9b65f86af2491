/**
 * Bundling at synthesis, not at construction. A NodejsFunction bundles its entry with esbuild the moment it is
 * constructed (its asset is staged in its constructor), so a stack that built its first worker had bundled four
 * functions (about 25 s) before the next `addJob` could report a mistake. Each function of this package is given a
 * DeferredBundledCode instead: the function, its role and everything that grants or reads it exist at once, and the
 * code's S3 location is a token that bundles when the template is resolved for output. The CDK writes templates after
 * it ran every construct's validation (synth: aspects, prepare, validate, then the templates), so ScheduledJobs reports every
 * problem of its `addJob` and `addWorker` calls together (its own validation) before any esbuild runs.
 *
 * How it bundles: as NodejsFunction itself does, by constructing one with the same entry and bundling options in a
 * scope of its own and taking its asset (`Code`), then removing that scratch function from the tree, so that the
 * bundling is aws-cdk-lib's own (esbuild, Docker fallback, command hooks, node modules, the lock file) through its
 * public API. The asset stays registered with the stack's synthesizer, and its metadata (`aws:asset:path`, which SAM
 * and `runLocally` read) is put on the real function.
 */
import { type CfnResource, type IResolveContext, Lazy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { Construct } from 'constructs';

/** What the scratch NodejsFunction needs to bundle exactly as the real one would have. */
export type BundleProps = Pick<
  nodejs.NodejsFunctionProps,
  'entry' | 'runtime' | 'architecture' | 'bundling' | 'depsLockFilePath' | 'projectRoot'
>;

/** The handler NodejsFunction names in its bundle (`index.js`, exporting `handler`). */
export const BUNDLED_HANDLER = 'index.handler';

/** What the code's location resolves to while the CDK prepares (never in a template). */
const PREPARING = 'bundled-at-synthesis';

/** The construct id of the scratch function, removed again once it has bundled. */
const SCRATCH_ID = 'Bundling';

/**
 * A function's code, bundled when the template that holds it is resolved (the first synthesis), once.
 * `bind` is what lambda.Function calls in its constructor; it hands back tokens for the bucket and the key.
 */
export class DeferredBundledCode extends lambda.Code {
  readonly isInline = false;
  private scope: Construct | undefined;
  private resource: CfnResource | undefined;
  private resourceProperty = 'Code';
  private asset: s3assets.Asset | undefined;

  constructor(private readonly props: BundleProps) {
    super();
  }

  bind(scope: Construct): lambda.CodeConfig {
    if (this.scope !== undefined && this.scope !== scope)
      throw new Error('DeferredBundledCode: bound to a second function; make one per function');
    this.scope = scope;
    // Uncached, and a placeholder while the CDK is still preparing: prepare resolves every template once to find
    // references between stacks, before the validation; the code holds none, and bundling then would come before
    // the app's mistakes are reported.
    const location = (part: (asset: s3assets.Asset) => string) =>
      Lazy.uncachedString({
        produce: (context: IResolveContext) => (context.preparing ? PREPARING : part(this.bundled())),
      });
    return {
      s3Location: {
        bucketName: location((asset) => asset.s3BucketName),
        objectKey: location((asset) => asset.s3ObjectKey),
      },
    };
  }

  bindToResource(resource: CfnResource, options: lambda.ResourceBindOptions = {}): void {
    this.resource = resource;
    // The asset's metadata is added when the template is rendered, after the resource's Metadata was picked up: an
    // object there now is the one the asset fills in (aws-cdk-lib writes it in place), and is left out while empty.
    resource.cfnOptions.metadata ??= {};
    this.resourceProperty = options.resourceProperty ?? 'Code';
  }

  /** The asset, bundled on first use by a scratch NodejsFunction that is removed from the tree at once. */
  private bundled(): s3assets.Asset {
    if (this.asset !== undefined) return this.asset;
    const scope = this.scope;
    if (scope === undefined) throw new Error('DeferredBundledCode: resolved before a function bound it');
    const holder = new Construct(scope, SCRATCH_ID);
    try {
      const scratch = new nodejs.NodejsFunction(holder, 'Function', { ...this.props, handler: 'handler' });
      this.asset = scratch.node.findChild('Code') as s3assets.Asset;
    } finally {
      scope.node.tryRemoveChild(SCRATCH_ID);
    }
    if (this.resource !== undefined) this.asset.addResourceMetadata(this.resource, this.resourceProperty);
    return this.asset;
  }
}
