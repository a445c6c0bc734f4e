/**
 * What invokes the functions besides the distribution: the event source mappings (SQS queues and
 * the table's stream), the schedules (EventBridge rules) and the state machines, each read from
 * the assembly (sqs-mappings.ts, stream-mappings.ts, schedules.ts, state-machines.ts).
 */
import type { Assembly } from './assembly.js';
import type { RehearsalQueues } from './queues.js';
import { startSchedules } from './schedules.js';
import { startSqsMappings } from './sqs-mappings.js';
import { startStreamMappings } from './stream-mappings.js';
import type { Authorizer, Invoker } from './types.js';

export interface DriverOptions {
  assembly: Assembly;
  host: Invoker;
  authorizer: Authorizer;
  queues: RehearsalQueues & { endpoint: string };
  dynamodbEndpoint: string;
  timeScale: number;
  log: (line: string) => void;
}

export interface Drivers {
  mappings: number;
  schedules: number;
  problems: string[];
  stop(): Promise<void>;
}

export async function startDrivers(options: DriverOptions): Promise<Drivers> {
  const resources = options.assembly.resources('AWS::Lambda::EventSourceMapping');
  const common = {
    resources,
    invoker: options.host,
    authorizer: options.authorizer,
    queues: options.queues.queues,
    log: options.log,
  };
  const sqs = await startSqsMappings({ ...common, endpoint: options.queues.endpoint });
  const streams = await startStreamMappings({
    ...common,
    dynamodbEndpoint: options.dynamodbEndpoint,
    sqsEndpoint: options.queues.endpoint,
  });
  const schedules = startSchedules({
    resources: options.assembly
      .resources('AWS::Events::Rule')
      .concat(options.assembly.resources('AWS::Lambda::Permission')),
    invoker: options.host,
    stackName: options.assembly.stackName,
    ruleArn: (rule) => String(options.assembly.attribute(rule.stack, rule.logicalId, 'Arn')),
    periodScale: options.timeScale,
    log: options.log,
  });
  return {
    mappings: sqs.mappings.length + streams.mappings.length,
    schedules: schedules.schedules.length,
    problems: [...sqs.errors, ...streams.errors, ...schedules.errors],
    stop: async () => {
      await schedules.stop();
      await sqs.stop();
      await streams.stop();
    },
  };
}
