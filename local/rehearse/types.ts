/**
 * The rehearsal's shared shapes (ARCHITECTURE.md, "Rehearsal of the deployment"): what the
 * assembly loader (assembly.ts) finds in cdk.out, and what the function host (host.ts) and the
 * IAM gateway (iam/) offer the parts that drive functions (routes, CloudFront behaviors, event
 * source mappings, schedules, the state machine).
 */

/** The rehearsal's account and region: the pseudo parameters every ARN is made of. */
export const REHEARSAL_ACCOUNT = '000000000000';
export const REHEARSAL_REGION = 'us-east-1';

/** One resource of the assembly, root or nested, with its properties resolved to local values. */
export interface AssemblyResource {
  /** The template it is in: '' for the root, else the nested stacks' logical ids joined by '/'. */
  stack: string;
  logicalId: string;
  type: string;
  /** Properties with every intrinsic resolved (Ref, GetAtt, Sub, Join, Select, Split, If...). */
  properties: Record<string, unknown>;
  /** `aws:cdk:path`, for messages. */
  path: string;
}

/** A Lambda function as its template defines it, its code located in cdk.out. */
export interface FunctionSpec {
  /** `<stack>/<logicalId>`, unique across nested stacks; the host's key for it. */
  key: string;
  logicalId: string;
  /** Its physical name (what Ref gives) and ARN. */
  name: string;
  arn: string;
  /** The asset folder in cdk.out (bundled code), and the handler (`index.handler`). */
  codeDir: string;
  handler: string;
  runtime: string;
  memoryMb: number;
  timeoutSeconds: number;
  reservedConcurrency?: number | undefined;
  /** Its template's environment, resolved. */
  environment: Record<string, string>;
  /** Its execution role's ARN and the identity policies attached to it (resolved). */
  roleArn: string;
  policies: { name: string; document: PolicyDocument }[];
}

export interface PolicyDocument {
  Version?: string;
  Statement: Record<string, unknown>[] | Record<string, unknown>;
}

/** What a failed invocation reports (Lambda's `Unhandled` / timeout errors). */
export class FunctionError extends Error {
  constructor(
    readonly functionKey: string,
    readonly kind: 'Unhandled' | 'TimedOut' | 'InitError' | 'Throttled',
    message: string,
    readonly errorType = 'Error',
  ) {
    super(message);
    this.name = 'FunctionError';
  }
}

/** Runs functions as Lambda would (host.ts). */
export interface Invoker {
  /** The functions of the assembly, by key. */
  readonly functions: ReadonlyMap<string, FunctionSpec>;
  /** The function whose ARN or name this is (ARNs of event sources and targets name functions so). */
  find(arnOrName: string): FunctionSpec | undefined;
  /**
   * One synchronous invocation (RequestResponse): resolves with the handler's result, rejects with
   * FunctionError (the handler threw, ran past its timeout, or failed to load).
   */
  invoke(key: string, event: unknown, options?: { requestId?: string }): Promise<unknown>;
}

/** Authorizes a call the rehearsal makes on a principal's behalf (iam/gateway.ts). */
export interface Authorizer {
  /**
   * `principal` is a role ARN (an event source mapping uses its function's execution role; a state
   * machine's task its own role) or, for resource policies, a service principal such as
   * `apigateway.amazonaws.com` with the resource's policy given.
   */
  authorize(
    principal: string,
    action: string,
    resource: string,
    context?: Record<string, string | string[]>,
  ): Promise<{ allowed: boolean; message: string }>;
}
