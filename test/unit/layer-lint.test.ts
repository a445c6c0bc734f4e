/**
 * The layer rule of `npm run lint` (eslint.config.js `layers` and `boundaries`, docs/architecture.md
 * "Layers"): an import against the direction of the layers of functions/, or across the boundaries
 * between functions/, lib/, local/ and web/src, is an error, one along them is not. Each case lints
 * a line of source as if it were the named file, through ESLint's own API and the project's config.
 */
import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });
const LAYER_RULE = '@typescript-eslint/no-restricted-imports';
/** Where a dynamic `import('…')` is checked (no-restricted-imports sees only static imports). */
const DYNAMIC_IMPORT_RULE = 'no-restricted-syntax';

/** The layer rule's messages for `code` linted as the file `filePath` (relative to the root). */
async function layerErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = [];\n`, { filePath: `${root}/${filePath}` });
  return result!.messages
    .filter((m) => m.ruleId === LAYER_RULE || (m.ruleId === DYNAMIC_IMPORT_RULE && m.message.includes('"Layers"')))
    .map((m) => m.message);
}

describe('the layer rule', () => {
  // Each a real import of the code before the rule: the wrong direction it took, and the file.
  it.each([
    ['functions/platform/env.ts', "import { requiredStoredSecret } from '../store/secrets-repo.js';", 'platform/'],
    [
      'functions/platform/origin-verify.ts',
      "import { errorResult } from '../middleware/error-envelope.js';",
      'platform/',
    ],
    ['functions/middleware/validate.ts', "import { LIMITS } from '../http/schemas.js';", 'middleware/'],
    ['functions/store/chats-repo.ts', "import { existingChat } from '../core/chats.js';", 'store/'],
    ['functions/core/chat-updates.ts', "import { http } from '../middleware/http.js';", 'core/'],
    ['functions/core/chat-updates.ts', "import type { HttpInput } from '../middleware/http.js';", 'core/'],
    ['functions/http/chats/get.ts', "import { getChat } from '../../store/chats-repo.js';", 'http/'],
    ['functions/jobs/flush.ts', "import { http } from '../middleware/http.js';", 'jobs/'],
    ['functions/model.ts', "import { ddb } from './store/db.js';", 'model.ts'],
    ['functions/errors.ts', "import { LIMITS } from './limits.js';", 'errors.ts'],
    ['functions/model/events.ts', "import { logger } from '../platform/logger.js';", 'model/'],
    ['functions/model/events.ts', "import type { StoredEvent } from '../store/events-repo.js';", 'model/'],
  ])('refuses, in %s, %s', async (filePath, code, layer) => {
    const errors = await layerErrors(filePath, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`${layer}`);
    expect(errors[0]).toContain('docs/architecture.md "Layers"');
  });

  it.each([
    ['functions/platform/instance-config.ts', "import { env } from './env.js';"],
    ['functions/store/secrets-repo.ts', "import { env } from '../platform/env.js';"],
    ['functions/store/chats-repo.ts', "import type { Chat } from '../model.js';"],
    ['functions/core/instance-config.ts', "import { requiredStoredSecret } from '../store/secrets-repo.js';"],
    ['functions/middleware/validate.ts', "import { LIMITS } from '../limits.js';"],
    ['functions/middleware/auth.ts', "import { checkSession } from '../core/sessions.js';"],
    ['functions/http/chats/get.ts', "import * as Chats from '../../core/chats.js';"],
    ['functions/http/requests/resolve.ts', "import type { RequestLocation } from '../../store/requests-repo.js';"],
    ['functions/jobs/stored-secrets.ts', "import { keepOrPut } from '../store/secrets-repo.js';"],
    ['functions/model.ts', "import * as z from './platform/zod.js';"],
    ['functions/model/events.ts', "import * as z from '../platform/zod.js';"],
    ['functions/model/events.ts', "import { MessageRole } from '../model.js';"],
    ['functions/model/request-config.ts', "import { EVENTS } from './events.js';"],
  ])('allows, in %s, %s', async (filePath, code) => {
    expect(await layerErrors(filePath, code)).toEqual([]);
  });
});

describe('the boundaries between functions/, lib/, local/ and web/src', () => {
  it.each([
    ['lib/stack.ts', "import { startLocalApi } from '../local/server.js';", 'lib/ is the CDK app'],
    ['lib/constructs/api.ts', "import { useApi } from '../../test/support/api.js';", 'lib/ is the CDK app'],
    ['lib/routes.ts', "import { tableSchema } from './table-schema.js';", 'lib/routes.ts is plain data'],
    ['functions/middleware/http.ts', "import { tableSchema } from '../../lib/table-schema.js';", 'functions/'],
    ['functions/core/chats.ts', "import { startLocalApi } from '../../local/server.js';", 'functions/'],
    ['functions/jobs/flush.ts', "import { Duration } from 'aws-cdk-lib';", 'functions/'],
    // What a call needs is passed to it (issue 35): no AsyncLocalStorage under functions/.
    ['functions/platform/deadline.ts', "import { AsyncLocalStorage } from 'node:async_hooks';", 'functions/'],
    ['functions/store/db.ts', "import { AsyncLocalStorage } from 'async_hooks';", 'functions/'],
    ['functions/platform/usage.ts', "const hooks = await import('node:async_hooks');", 'functions/'],
    ['functions/model/request-config.ts', "import { Keys } from '../store/keys.js';", 'model/'],
    ['functions/platform/text-pattern.ts', "import { env } from './env.js';", 'text-pattern.ts'],
    ['local/server.ts', "import { useApi } from '../test/support/api.js';", 'local/ is the local runtime'],
    ['local/server.ts', "import { Api } from '../lib/constructs/api.js';", 'local/ is the local runtime'],
    ['local/run.ts', "import { ChatRelayStack } from '../lib/stack.js';", 'local/ is the local runtime'],
    ['local/table.ts', "import { Table } from 'aws-cdk-lib/aws-dynamodb';", 'local/ is the local runtime'],
    ['local/run.ts', "const { useApi } = await import('../test/support/api.js');", 'local/ is the local runtime'],
    ['web/src/api/client.ts', "import { routes } from '../../../lib/routes.js';", 'web/src is the browser app'],
    ['web/src/api/types.ts', "import { Chat } from '../../../functions/model.js';", 'web/src is the browser app'],
    [
      'web/src/requests/Requests.tsx',
      "const { env } = await import('../../../functions/platform/env');",
      'web/src is the browser app',
    ],
  ])('refuses, in %s, %s', async (filePath, code, boundary) => {
    const errors = await layerErrors(filePath, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(boundary);
    expect(errors[0]).toContain('docs/architecture.md "Layers"');
  });

  // Each a real import of the code.
  it.each([
    ['lib/stack.ts', "import { Keys } from '../functions/store/keys.js';"],
    ['lib/openapi/load.ts', "import { routes } from '../routes.js';"],
    ['functions/middleware/http.ts', "import { authClassOf, routes } from '../../lib/routes.js';"],
    ['functions/model/request-config.ts', "import { FormFieldType, OptionVariant } from '../model.js';"],
    ['local/server.ts', "import { ddb } from '../functions/store/db.js';"],
    // The local runtime keeps its invocation contexts with it (local/invocations.ts).
    ['local/invocations.ts', "import { AsyncLocalStorage } from 'node:async_hooks';"],
    ['local/table.ts', "import { tableSchema } from '../lib/table-schema.js';"],
    ['local/run.ts', "const tableModule = import('./table.js');"],
    ['web/src/api/types.ts', "import type * as Shapes from '../../../functions/model.js';"],
    [
      'web/src/requests/Requests.tsx',
      "const { textMatchesPattern } = await import('../../../functions/platform/text-pattern');",
    ],
  ])('allows, in %s, %s', async (filePath, code) => {
    expect(await layerErrors(filePath, code)).toEqual([]);
  });
});

describe("the web app's folders", () => {
  it.each([
    ['web/src/api/client.ts', "import { useConfig } from '../shared/config';", 'web/src/api/'],
    ['web/src/api/query-client.ts', "import { upsertChat } from '../inbox/chats';", 'web/src/api/'],
    ['web/src/shared/config.ts', "import { live } from '../live/events';", 'web/src/shared/'],
    [
      'web/src/shared/markdown/plain.ts',
      "import type { SnippetPart } from '../../search/snippet.js';",
      'web/src/shared/',
    ],
    ['web/src/live/push.ts', "import { refreshChat } from '../inbox/chats';", 'web/src/live/'],
    ['web/src/chat/ChatView.tsx', "import { startLiveCache } from '../live-cache';", 'web/src/<feature>/'],
    ['web/src/inbox/ChatList.tsx', "import { App } from '../App';", 'web/src/<feature>/'],
  ])('refuses, in %s, %s', async (filePath, code, folder) => {
    const errors = await layerErrors(filePath, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(folder);
    expect(errors[0]).toContain('docs/web-app.md "Folders"');
  });

  it.each([
    ['web/src/shared/config.ts', "import { keys, queryClient } from '../api/query-client';"],
    ['web/src/live/NotificationsSwitch.tsx', "import { useConfig } from '../shared/config';"],
    ['web/src/chat/ChatView.tsx', "import { useChat } from '../inbox/chats';"],
    ['web/src/chat/messages.ts', "import { live } from '../live/events';"],
    ['web/src/live-cache.ts', "import { refreshChat } from './inbox/chats';"],
    // The browser app's boundary still holds in its folders.
    ['web/src/api/types.ts', "import type * as Events from '../../../functions/model/events.js';"],
  ])('allows, in %s, %s', async (filePath, code) => {
    expect(await layerErrors(filePath, code)).toEqual([]);
  });

  it('keeps the browser boundary in every folder (a folder rule does not replace it)', async () => {
    const errors = await layerErrors('web/src/chat/chat.ts', "import { routes } from '../../../lib/routes.js';");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('web/src is the browser app');
  });
});
