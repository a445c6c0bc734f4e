/**
 * Starts the wake-up loop that cancels an abandoned stream (contract §4.2, §13 item 6).
 * In AWS it is an execution of the stream-timeout state machine (wait → expiry function →
 * loop while the stream is active), named by the message id so a retried start is a no-op.
 * The local runtime installs an in-process timer that runs the same expiry code
 * (local/stream-timers.ts). Correctness never rests on it: every read and write of a stream
 * treats an overdue stream as cancelled.
 */
import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { env } from './env.js';
import { logger } from './logger.js';
import { CONTROL_PLANE_BUDGET, clientBudget } from './aws-clients.js';

export interface StreamTimerInput {
  messageId: string;
  /** Seconds until the first check (the configured idle timeout). */
  waitSeconds: number;
}

export type StreamTimerStarter = (input: StreamTimerInput) => Promise<void>;

let installed: StreamTimerStarter | undefined;
let sfn: SFNClient | undefined;

/** Replaces the Step Functions starter (the local runtime's in-process timer). */
export function installStreamTimer(starter: StreamTimerStarter | undefined): void {
  installed = starter;
}

async function startExecution(input: StreamTimerInput): Promise<void> {
  const stateMachineArn = env().STREAM_TIMEOUT_STATE_MACHINE_ARN;
  if (!stateMachineArn) {
    logger.warn('stream timer not configured: an abandoned stream is cancelled when next read or written', {
      messageId: input.messageId,
    });
    return;
  }
  // Timeouts and attempts that end inside the route's timeout (aws-clients.ts).
  sfn ??= new SFNClient(clientBudget(CONTROL_PLANE_BUDGET));
  try {
    await sfn.send(new StartExecutionCommand({ stateMachineArn, name: input.messageId, input: JSON.stringify(input) }));
  } catch (error) {
    if (!(error instanceof ExecutionAlreadyExists)) throw error;
  }
}

/**
 * Starts the timer for a stream that was just created. A failure is logged, not thrown: the
 * message is committed, and reads and writes still expire it lazily.
 */
export async function startStreamTimer(input: StreamTimerInput): Promise<void> {
  try {
    await (installed ?? startExecution)(input);
  } catch (error) {
    logger.error('could not start the stream timer', { messageId: input.messageId, error });
  }
}
