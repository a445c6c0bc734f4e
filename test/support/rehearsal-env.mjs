/**
 * The rehearsal project's setup file, run in each of its test files' own environment (jest gives
 * every file a copy of process.env): the file is on the rehearsal (test/support/api.ts hands over
 * to the assembly), with the project's DynamoDB Local. The integration project runs the same
 * files, in the same jest run under `npm test`, on the sources and the run's other DynamoDB Local.
 */
process.env.RELAY_TEST_REHEARSAL = '1';
if (process.env.REHEARSAL_DYNAMODB_ENDPOINT)
  process.env.TEST_DYNAMODB_ENDPOINT = process.env.REHEARSAL_DYNAMODB_ENDPOINT;
