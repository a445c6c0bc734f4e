/**
 * Push endpoint bodies (contract §5.10): any JSON object; the endpoint and key rules, with
 * their exact messages, are core/push-endpoint.ts's, checked before the push-enabled check.
 */
import { z } from 'zod';

export const subscriptionBody = { body: z.looseObject({}) };
