/**
 * Stands in for @aws-sdk/credential-provider-node in the Lambda bundles (bundle.ts,
 * lambdaCredentials): the default chain's first link only, credentials from the environment.
 * Lambda gives every function its role's credentials there (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), and sets no AWS_PROFILE, so on Lambda the full chain
 * answers from the same link; the rest of it (SSO, ini files, credential processes, web identity,
 * container and instance metadata, with the STS and SSO clients they use) is ~100 KB that a
 * function would parse at every cold start and never run. Tests and the local runtime run the
 * sources, with the full chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';
import type { AwsCredentialIdentityProvider } from '@aws-sdk/types';

export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}): AwsCredentialIdentityProvider =>
  fromEnv(init);

export const credentialsWillNeedRefresh = (credentials?: { expiration?: Date }): boolean =>
  credentials?.expiration !== undefined;

export const credentialsTreatedAsExpired = (credentials?: { expiration?: Date }): boolean =>
  credentials?.expiration !== undefined && credentials.expiration.getTime() - Date.now() < 300_000;
