/** The e2e project's globalTeardown: closes the shared browser and stops the run's DynamoDB Local (jest runs it after failed runs too). */
export default async function browserTeardown() {
  await Promise.all([globalThis.__e2eBrowser__?.close(), globalThis.__e2eDynamo__?.stop()]);
}
