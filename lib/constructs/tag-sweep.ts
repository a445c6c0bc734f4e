/**
 * The tag catalog sweeper (functions/jobs/tag-sweep.ts), scheduled every minute: it applies
 * the catalog parts a chat write with many tag changes left behind when its function died
 * between its commit and their apply (functions/store/tags-repo.ts).
 */
import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { ApiFunction, jobEntry } from './api-function.js';
import type { FunctionWiring } from './api-function.js';

export type TagSweepProps = FunctionWiring;

export class TagSweep extends Construct {
  readonly sweepFunction: ApiFunction;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: TagSweepProps) {
    super(scope, id);
    this.sweepFunction = ApiFunction.wired(this, 'Sweep', props, 'readWrite', {
      entry: jobEntry('tag-sweep'),
      description: 'Applies tag catalog counts stranded by a crashed chat write (every minute)',
    });
    this.schedule = new Rule(this, 'Schedule', {
      description: 'Runs the tag catalog sweeper',
      schedule: Schedule.rate(Duration.minutes(1)),
      // Every part counts once however often it is tried; the next run retries a failed one.
      targets: [new LambdaFunction(this.sweepFunction, { retryAttempts: 0 })],
    });
  }
}
