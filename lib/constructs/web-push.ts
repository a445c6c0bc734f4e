/**
 * Web push (contract §7), present when the configuration enables push:
 * - the VAPID key pair in the table's SECRET#VAPID item, made once by the stored-secrets custom
 *   resource on the deploy that turns push on (stored-secrets.ts) and kept after; its public key is
 *   handed to every function (VAPID_PUBLIC_KEY: GET /config shows it), and only the senders may read
 *   the item (bindSender);
 * - the notifications themselves are sent by the consumer of events' side effects
 *   (event-effects.ts), which this construct binds as a sender.
 */
import { Construct } from 'constructs';
import type { ApiFunction } from './api-function.js';
import type { StoredSecrets } from './stored-secrets.js';

export interface WebPushProps {
  /** The stack's stored secrets, VAPID among them. */
  secrets: StoredSecrets;
}

export class WebPush extends Construct {
  private readonly secrets: StoredSecrets;
  /** The public key (a deploy-time token): every function's VAPID_PUBLIC_KEY. */
  readonly publicKey: string;

  constructor(scope: Construct, id: string, props: WebPushProps) {
    super(scope, id);
    this.secrets = props.secrets;
    this.publicKey = props.secrets.vapidPublicKey;
  }

  /** A function that sends pushes: may read the key pair (STORED_SECRETS VAPID). */
  bindSender(fn: ApiFunction): void {
    this.secrets.bind(fn, 'VAPID');
  }
}
