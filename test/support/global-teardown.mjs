export default async function globalTeardown() {
  await globalThis.__dynamo__?.stop();
}
