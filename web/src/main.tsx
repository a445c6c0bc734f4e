import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { registerServiceWorker } from './live/push';
import './styles.css';
import './isolation.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

// The service worker shows pushes and opens their chats (live/push.ts); the app works without it.
void registerServiceWorker()?.catch(() => undefined);
