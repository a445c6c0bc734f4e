/** GET /api/v1/config: the live configuration without secrets (contract §2.11, §5.2.1). */
import { publicConfig } from '../../core/instance-config.js';
import { http } from '../../middleware/http.js';

export const handler = http('config/get', {}, async ({ config }) => ({
  status: 200,
  body: publicConfig(config),
}));
