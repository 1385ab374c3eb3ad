// Start-up: find the hub (same origin, or the desktop app's choice), wire client → feed →
// stores, render. The only place that creates long-lived objects.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient } from './api/client.ts';
import { App } from './App.tsx';
import { ConsoleContext } from './components/console-context.ts';
import { ConsoleActions, setDesktopHub, storedToken } from './live/console-actions.ts';
import { desktopBridge } from './live/desktop-bridge.ts';
import { LiveFeed } from './live/live-feed.ts';
import { connectionStore } from './stores/connection.ts';
import './styles.css';

async function boot(): Promise<void> {
  const bridge = desktopBridge();
  const hubUrl = bridge ? await bridge.getHubUrl() : '';
  connectionStore.getState().setHubUrl(hubUrl || location.origin);
  if (bridge) setDesktopHub(hubUrl || 'no-hub');
  // Desktop: HTTP goes same-origin through the app's scheme (main adds the token and passes it
  // on); only the socket connects to the hub directly.
  const client = createApiClient({ baseUrl: '', eventsBaseUrl: hubUrl || undefined, getToken: storedToken });
  const feed = new LiveFeed({ client, origin: location.origin });
  const actions = new ConsoleActions(client, feed, location.origin);
  feed.start();
  window.addEventListener('beforeunload', () => feed.stop());
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <ConsoleContext.Provider value={actions}>
        <App />
      </ConsoleContext.Provider>
    </StrictMode>,
  );
}

void boot();
