/** The e2e project's globalTeardown: closes the shared browser (jest runs it after failed runs too). */
export default async function browserTeardown() {
  await globalThis.__e2eBrowser__?.close();
}
