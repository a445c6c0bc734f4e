/**
 * A Step Functions request (`X-Amz-Target: AWSStepFunctions.<Op>`) as IAM's check: `states:<Op>`
 * on the state machine (StartExecution, DescribeStateMachine…), the execution (DescribeExecution,
 * StopExecution…) or the ARN the request names, else `*` (SendTaskSuccess and the lists).
 */
import { text } from './types.js';
import type { Body, Check } from './types.js';

export const SFN_TARGET = 'AWSStepFunctions.';

export function sfnChecks(target: string, body: Body): Check[] {
  const operation = target.slice(SFN_TARGET.length);
  const named = text(body.stateMachineArn) ?? text(body.executionArn) ?? text(body.mapRunArn) ?? text(body.resourceArn);
  return [{ action: `states:${operation}`, resource: named ?? '*' }];
}
