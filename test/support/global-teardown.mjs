import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  await globalThis.__dynamo__?.stop();
  const s3 = globalThis.__s3__;
  if (s3) {
    await s3.stop();
    rmSync(s3.dir, { recursive: true, force: true });
  }
}
