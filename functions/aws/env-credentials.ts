/**
 * The SDK clients' default credential provider, for the bundles only: esbuild aliases
 * `@aws-sdk/credential-provider-node` to this file (lib/job-function.ts JOB_FUNCTION_BUNDLING), because every client
 * imports that chain statically whatever credentials it is given. In Lambda the credentials are always in the
 * environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), so the rest of the chain (SSO, INI files,
 * web identity, the container and instance metadata, and the STS and SSO clients they carry in
 * `@aws-sdk/nested-clients`) is code every cold start loads and no invocation runs: about 85 KB of each bundle.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/** The environment's credentials; a missing variable fails the first call with the SDK's own CredentialsProviderError. */
export const defaultProvider: typeof fromEnv = (init) => fromEnv(init);
