/**
 * GET /api/v1/events/stream with the instance secret enabled and the read toggle on
 * (§1.11, §5.9): the stream behaves exactly as with the toggle off, and other GETs need the
 * secret too.
 */
import { streamAuthTests } from './auth-cases.js';

streamAuthTests(true);
