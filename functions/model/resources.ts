/**
 * The resources of model.ts, each as a named OpenAPI component, for the replies that answer them
 * (model/replies.ts): a handler's `json('The chat.', Chat)`. `check` returns a copy, so model.ts's
 * own schemas (the store's field lists, the events' payloads) stay unnamed.
 */
import * as z from '../platform/zod.js';
import * as Model from '../model.js';

export const Chat = Model.Chat.check(z.meta({ id: 'Chat', description: 'A chat (contract §2.1).' }));
export const Message = Model.Message.check(z.meta({ id: 'Message', description: 'A message (contract §2.2).' }));
export const Request = Model.Request.check(
  z.meta({ id: 'Request', description: 'An interactive request (contract §2.3).' }),
);
export const Media = Model.Media.check(z.meta({ id: 'Media', description: 'A media record (contract §2.4).' }));
export const DecisionEntry = Model.DecisionEntry.check(
  z.meta({ id: 'DecisionEntry', description: 'An entry of the decision log (contract §5.5.6).' }),
);
