/**
 * GET /api/v1/events/stream with the instance secret enabled and the read toggle off
 * (§1.11, §5.9): the stream still needs the secret, while other GETs do not. (With the secret
 * off, the stream opens without credentials: stream.test.ts.)
 */
import { streamAuthTests } from './auth-cases.js';

streamAuthTests(false);
