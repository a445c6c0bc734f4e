/**
 * Every DynamoDB request the in-process handlers send while `f` runs, as `<Command> <input JSON>`
 * (keys and all): for tests that assert which storage calls a path makes, or that it makes none.
 */
import { ddb } from '../../functions/store/db.js';

export async function callsDuring(f: () => Promise<void>): Promise<string[]> {
  const calls: string[] = [];
  const name = `count-calls-${Math.random()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(`${context.commandName} ${JSON.stringify(args.input)}`);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await f();
  } finally {
    ddb().middlewareStack.remove(name);
  }
  return calls;
}
