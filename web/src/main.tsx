import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { registerServiceWorker } from './live/push';
// The stylesheets, in cascade order: the foundation first, then one per feature (later rules win ties).
import './styles/base.css';
import './styles/frame.css';
import './styles/chat-list.css';
import './styles/chat.css';
import './styles/messages.css';
import './styles/media.css';
import './styles/requests.css';
import './styles/composer.css';
import './styles/new-chat.css';
import './styles/tags.css';
import './styles/search.css';
import './styles/notifications.css';
import './styles/settings.css';
import './isolation.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

// The service worker shows pushes and opens their chats (live/push.ts); the app works without it.
void registerServiceWorker()?.catch(() => undefined);
