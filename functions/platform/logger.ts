/** Structured JSON logs (Powertools Logger), one instance per container. */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: 'chat-relay' });
