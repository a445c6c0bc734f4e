/**
 * The policy decision of the rehearsal: one check (action, resource, request context) of one
 * principal, evaluated by a real IAM policy evaluator (@cloud-copilot/iam-simulate) against the
 * principal's identity policies and the resource's policy, with the global condition keys AWS
 * sets for a Lambda function's role session.
 *
 * A decision depends only on the principal, the check and that context, so it is cached: the
 * evaluator takes 1 to 15 ms per check, a cache hit microseconds. Policies that name the time
 * (aws:CurrentTime, aws:EpochTime) are the exception and are evaluated every time.
 */
import { createHash } from 'node:crypto';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import type { Check, Decision, Denial, PolicyDocument, RehearsalPrincipal } from './types.js';

/** Past this many cached decisions the cache starts over (partition keys make the space open-ended). */
const MAX_CACHED = 50_000;
/** The denials kept for the summary and tests (a loop of denials must not grow memory without end). */
const MAX_DENIALS = 10_000;

export interface EvaluatorOptions {
  account: string;
  region: string;
  principals: RehearsalPrincipal[];
  /** Queue and bucket policies by the ARN of the queue or bucket. */
  resourcePolicies?: Record<string, PolicyDocument>;
}

interface Session {
  principal: RehearsalPrincipal;
  /** `arn:aws:sts::<account>:assumed-role/<role>/<session>`, the caller AWS names in a denial. */
  sessionArn: string;
  identityPolicies: { name: string; policy: PolicyDocument }[];
  /** The global condition keys of every request of this session. */
  globals: Record<string, string | string[]>;
  /** Whether a policy names the time: its decisions are not cached. */
  timed: boolean;
}

const TIME_KEYS = /aws:(currenttime|epochtime)/i;

/** A stable role id (AROA…) for aws:userid, derived from the role's ARN as AWS keeps one per role. */
function roleId(roleArn: string): string {
  const digest = createHash('sha256')
    .update(roleArn)
    .digest('base64')
    .replace(/[^A-Za-z0-9]/g, '');
  return `AROA${digest.slice(0, 17).toUpperCase()}`;
}

export function roleName(roleArn: string): string {
  const i = roleArn.indexOf(':role/');
  const path = i < 0 ? roleArn : roleArn.slice(i + ':role/'.length);
  return path.slice(path.lastIndexOf('/') + 1);
}

export function sessionArnOf(principal: RehearsalPrincipal, account: string): string {
  return `arn:aws:sts::${account}:assumed-role/${roleName(principal.roleArn)}/${principal.sessionName ?? principal.name}`;
}

/**
 * AWS's denial sentence. S3 quotes the resource; SQS writes the action in lower case (as its
 * messages do); the other services write both as they are.
 */
export function denialMessage(
  sessionArn: string,
  action: string,
  resource: string,
  reason: 'implicit' | 'identity' | 'resource',
): string {
  const service = action.slice(0, action.indexOf(':'));
  const shownAction = service === 'sqs' ? action.toLowerCase() : action;
  const shownResource = service === 's3' ? `"${resource}"` : resource;
  const why =
    reason === 'implicit'
      ? `because no identity-based policy allows the ${shownAction} action`
      : `with an explicit deny in ${reason === 'identity' ? 'an identity-based' : 'a resource-based'} policy`;
  return `User: ${sessionArn} is not authorized to perform: ${shownAction} on resource: ${shownResource} ${why}`;
}

export class PolicyEvaluator {
  readonly denials: Denial[] = [];
  private readonly sessions = new Map<string, Session>();
  private readonly byKeyId = new Map<string, RehearsalPrincipal>();
  private readonly cache = new Map<string, Promise<Decision>>();
  private readonly resourcePolicies: Record<string, PolicyDocument>;

  constructor(private readonly options: EvaluatorOptions) {
    this.resourcePolicies = options.resourcePolicies ?? {};
    const timedResources = Object.values(this.resourcePolicies).some((p) => TIME_KEYS.test(JSON.stringify(p)));
    for (const principal of options.principals) {
      if (this.sessions.has(principal.name)) throw new Error(`rehearsal IAM: two principals named ${principal.name}`);
      if (this.byKeyId.has(principal.accessKeyId))
        throw new Error(`rehearsal IAM: ${principal.name} shares its access key id with another principal`);
      const sessionName = principal.sessionName ?? principal.name;
      const globals: Record<string, string | string[]> = {
        'aws:SecureTransport': 'true',
        'aws:PrincipalArn': principal.roleArn,
        'aws:PrincipalAccount': options.account,
        'aws:PrincipalType': 'AssumedRole',
        'aws:userid': `${roleId(principal.roleArn)}:${sessionName}`,
        'aws:RequestedRegion': options.region,
        'aws:ViaAWSService': 'false',
        'aws:PrincipalIsAWSService': 'false',
        ...(principal.functionArn ? { 'lambda:SourceFunctionArn': principal.functionArn } : {}),
      };
      this.sessions.set(principal.name, {
        principal,
        sessionArn: sessionArnOf(principal, options.account),
        identityPolicies: principal.policies.map((p) => ({ name: p.name, policy: p.document })),
        globals,
        timed: timedResources || principal.policies.some((p) => TIME_KEYS.test(JSON.stringify(p.document))),
      });
      this.byKeyId.set(principal.accessKeyId, principal);
    }
  }

  principalByKeyId(accessKeyId: string): RehearsalPrincipal | undefined {
    return this.byKeyId.get(accessKeyId);
  }

  principalNamed(name: string): RehearsalPrincipal | undefined {
    return this.sessions.get(name)?.principal;
  }

  /** The decision of one check; a denial is also recorded in `denials`. */
  async decide(principalName: string, check: Check): Promise<Decision> {
    const session = this.sessions.get(principalName);
    if (!session) throw new Error(`rehearsal IAM: no principal named ${principalName}`);
    const key = `${principalName}\0${check.action}\0${check.resource}\0${JSON.stringify(check.context ?? {})}`;
    let pending = session.timed ? undefined : this.cache.get(key);
    if (!pending) {
      pending = this.evaluate(session, check);
      if (!session.timed) {
        if (this.cache.size >= MAX_CACHED) this.cache.clear();
        this.cache.set(key, pending);
      }
    }
    const decision = await pending;
    if (!decision.allowed && this.denials.length < MAX_DENIALS)
      this.denials.push({
        principal: principalName,
        action: check.action,
        resource: check.resource,
        message: decision.message,
      });
    return decision;
  }

  /** Every check must be allowed: the first denial (in order) is the answer, as one denied item denies a whole call. */
  async decideAll(principalName: string, checks: Check[]): Promise<Decision> {
    const decisions = await Promise.all(checks.map((check) => this.decide(principalName, check)));
    return decisions.find((d) => !d.allowed) ?? { allowed: true, message: '' };
  }

  /** The policy of the queue, bucket or table a resource ARN is in, if any. */
  private resourcePolicyFor(resource: string): PolicyDocument | undefined {
    const exact = this.resourcePolicies[resource];
    if (exact) return exact;
    if (resource.startsWith('arn:aws:s3:::')) return this.resourcePolicies[resource.split('/')[0]!];
    const table = /^(arn:aws:dynamodb:[^:]*:[^:]*:table\/[^/]+)\//.exec(resource);
    return table ? this.resourcePolicies[table[1]!] : undefined;
  }

  private async evaluate(session: Session, check: Check): Promise<Decision> {
    const now = new Date();
    const context: Record<string, string | string[]> = {
      ...session.globals,
      ...(session.timed
        ? { 'aws:CurrentTime': now.toISOString(), 'aws:EpochTime': String(Math.floor(now.getTime() / 1000)) }
        : {}),
      ...check.context,
    };
    const resourcePolicy = this.resourcePolicyFor(check.resource);
    const result = await runSimulation(
      {
        request: {
          principal: session.sessionArn,
          action: check.action,
          resource: { resource: check.resource, accountId: this.options.account },
          contextVariables: context,
        },
        identityPolicies: session.identityPolicies,
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
      },
      { simulationMode: 'Strict' },
    );
    if (result.resultType === 'error') {
      // An action or resource the evaluator does not know: AWS would not allow it either.
      return {
        allowed: false,
        message:
          denialMessage(session.sessionArn, check.action, check.resource, 'implicit') +
          ` (rehearsal: the policy evaluator could not evaluate this request: ${result.errors.message})`,
      };
    }
    if (result.overallResult === 'Allowed') return { allowed: true, message: '' };
    const analysis = result.resultType === 'single' ? result.result.analysis : result.results[0]?.analysis;
    const reason =
      analysis?.identityAnalysis?.result === 'ExplicitlyDenied'
        ? 'identity'
        : analysis?.resourceAnalysis?.result === 'ExplicitlyDenied'
          ? 'resource'
          : 'implicit';
    return { allowed: false, message: denialMessage(session.sessionArn, check.action, check.resource, reason) };
  }
}
