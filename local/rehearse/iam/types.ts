/**
 * The shapes the rehearsal's IAM enforcement works with (local/rehearse/iam/): a principal (one
 * function's role session and its keys), one authorization check, and one decision.
 */

/** An IAM policy document as the template has it, intrinsics already resolved to local ARNs. */
export interface PolicyDocument {
  Version?: string;
  Id?: string;
  Statement: unknown[] | Record<string, unknown>;
}

export interface RehearsalPrincipal {
  /** The function's logical id, for messages and the denials list. */
  name: string;
  /** `arn:aws:iam::<account>:role/<RoleName>`. */
  roleArn: string;
  /** The session name in `assumed-role/<role>/<session>` (Lambda uses the function's name); defaults to `name`. */
  sessionName?: string;
  /** The function's ARN, given to conditions as `lambda:SourceFunctionArn` as Lambda does, when known. */
  functionArn?: string;
  /** Per function: the function's SDK signs with these. */
  accessKeyId: string;
  secretAccessKey: string;
  /** The identity policies of its role. */
  policies: { name: string; document: PolicyDocument }[];
}

/** One question IAM asks about a request: may this principal do `action` on `resource`, in `context`? */
export interface Check {
  action: string;
  resource: string;
  /** Request-specific condition keys (dynamodb:LeadingKeys, s3:prefix…); global keys are added by the evaluator. */
  context?: Record<string, string | string[]>;
}

export interface Decision {
  allowed: boolean;
  /** AWS's sentence for a denial (empty when allowed). */
  message: string;
}

export interface Denial {
  principal: string;
  action: string;
  resource: string;
  message: string;
}

/** A request's JSON body: whatever the client sent, so every field is read through the guards below. */
export type Body = Record<string, unknown>;
export const obj = (v: unknown): Body => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : {});
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
