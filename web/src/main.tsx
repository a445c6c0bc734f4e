import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { registerServiceWorker } from './live/push';
// The stylesheets, in cascade order: the foundation first, then one per feature (later rules win ties).
import './shared/base.css';
import './shared/frame.css';
import './inbox/chat-list.css';
import './chat/chat.css';
import './chat/messages.css';
import './media/media.css';
import './requests/requests.css';
import './chat/composer.css';
import './inbox/new-chat.css';
import './chat/tags.css';
import './search/search.css';
import './live/notifications.css';
import './settings/settings.css';
import './approvals/approvals.css';
import './decisions/decisions.css';
import './isolation.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

// The service worker shows pushes and opens their chats (live/push.ts); the app works without it.
void registerServiceWorker()?.catch(() => undefined);
