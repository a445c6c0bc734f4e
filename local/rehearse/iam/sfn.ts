/**
 * A Step Functions request (`X-Amz-Target: AWSStepFunctions.<Op>`) as IAM's check: `states:<Op>`
 * on the state machine (StartExecution, DescribeStateMachine…), the execution (DescribeExecution,
 * StopExecution…) or the ARN the request names, else `*` (SendTaskSuccess and the lists).
 */
import type { Check } from './types.js';

export const SFN_TARGET = 'AWSStepFunctions.';

export function sfnChecks(target: string, body: Record<string, any>): Check[] {
  const operation = target.slice(SFN_TARGET.length);
  const named = body.stateMachineArn ?? body.executionArn ?? body.mapRunArn ?? body.resourceArn;
  return [{ action: `states:${operation}`, resource: typeof named === 'string' ? named : '*' }];
}
