/**
 * Who the rehearsal's IAM gateway knows (iam/gateway.ts): one principal per role that acts in the
 * assembly, with that role's synthesized policies.
 * - each function's execution role, named after its (first) function, so denials read
 *   "assumed-role/<role>/<function>"; its key pair goes into the function's environment, so the
 *   gateway knows whose policies apply to each signed request;
 * - each state machine's role, named after its state machine: Step Functions assumes it to run
 *   the machine's tasks, so the interpreter (asl.ts) checks a Lambda task's
 *   lambda:InvokeFunction against it, as AWS does. Its key pair signs nothing (the rehearsal
 *   makes the machine's calls in-process) but is unique like every principal's.
 *
 *   rolePrincipals(assembly, functions) -> { principals, principalOf, credentials }
 */
import { randomBytes } from 'node:crypto';
import type { Assembly } from './assembly.js';
import type { RehearsalPrincipal } from './iam/types.js';
import type { FunctionSpec } from './types.js';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface RolePrincipals {
  principals: RehearsalPrincipal[];
  /** The principal's name for each role ARN. */
  principalOf: Map<string, string>;
  /** Each function role's key pair, by role ARN (the functions' environments carry them). */
  credentials: Map<string, Credentials>;
}

export function rolePrincipals(assembly: Assembly, functions: readonly FunctionSpec[]): RolePrincipals {
  const principals: RehearsalPrincipal[] = [];
  const principalOf = new Map<string, string>();
  const credentials = new Map<string, Credentials>();
  const keyPair = (): Credentials => ({
    // The key id names the principal's place in the list: unique, and recognisably the rehearsal's.
    accessKeyId: `ASIAREHEARSAL${String(principals.length).padStart(7, '0')}`,
    secretAccessKey: randomBytes(20).toString('base64'),
  });
  for (const spec of functions) {
    if (principalOf.has(spec.roleArn)) continue;
    const keys = keyPair();
    credentials.set(spec.roleArn, keys);
    principalOf.set(spec.roleArn, spec.logicalId);
    principals.push({ name: spec.logicalId, roleArn: spec.roleArn, ...keys, policies: spec.policies });
  }
  const policies = assembly.rolePolicies();
  for (const machine of assembly.resources('AWS::StepFunctions::StateMachine')) {
    const roleArn = String(machine.properties.RoleArn);
    // A role the assembly does not define stays unknown: the machine's tasks are then denied.
    const rolePolicies = policies.get(roleArn);
    if (principalOf.has(roleArn) || !rolePolicies) continue;
    principalOf.set(roleArn, machine.logicalId);
    principals.push({ name: machine.logicalId, roleArn, ...keyPair(), policies: rolePolicies });
  }
  return { principals, principalOf, credentials };
}
