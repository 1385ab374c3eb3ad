// The console's frame: header with the fleet at a glance, the link banner, and four views.
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import { CapacityBanner } from './components/CapacityBanner.tsx';
import { ConnectionBanner } from './components/ConnectionBanner.tsx';
import { DesktopSettings } from './components/DesktopSettings.tsx';
import { HeaderSummary } from './components/HeaderSummary.tsx';
import { HubIdent } from './components/HubIdent.tsx';
import { TokenPrompt } from './components/TokenPrompt.tsx';
import { desktopBridge } from './live/desktop-bridge.ts';
import { tokenToAsk } from './model/hub-tokens.ts';
import { connectionStore } from './stores/connection.ts';
import { useActions } from './components/console-context.ts';
import { jobsRouteHash, parseRoute } from './model/view-route.ts';
import { jobsStore } from './stores/jobs.ts';
import { ChartsView } from './views/ChartsView.tsx';
import { HubsView } from './views/HubsView.tsx';
import { JobsView } from './views/JobsView.tsx';
import { WorkersView } from './views/WorkersView.tsx';
import { WallView } from './views/WallView.tsx';

const VIEWS = ['workers', 'wall', 'hubs', 'jobs', 'charts'] as const;
type View = (typeof VIEWS)[number];

function viewFromHash(): View {
  const { view } = parseRoute(location.hash);
  return (VIEWS as readonly string[]).includes(view) ? (view as View) : 'workers';
}

export function App() {
  const [view, setView] = useState<View>(viewFromHash);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const authRequired = useStore(connectionStore, (s) => s.link.authRequired);
  const apiAuth = useStore(connectionStore, (s) => s.apiAuth);
  const ask = tokenToAsk(authRequired, apiAuth);

  const actions = useActions();
  // The Jobs tab goes back to the list as it was left (its filter and open job).
  const jobsHref = useStore(jobsStore, (s) => jobsRouteHash({ statusFilter: s.statusFilter, search: s.search, jobId: s.selectedId }));
  useEffect(() => {
    actions.applyRoute(location.hash);
    const on = () => {
      setView(viewFromHash());
      actions.applyRoute(location.hash);
    };
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, [actions]);

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          Paprika <span className="brand-sub">console</span>
        </div>
        <nav className="tabs">
          {VIEWS.map((v) => (
            <a key={v} href={v === 'jobs' ? jobsHref : `#/${v}`} className={v === view ? 'tab active' : 'tab'} data-testid={`tab-${v}`}>
              {v}
            </a>
          ))}
        </nav>
        <HeaderSummary />
        <div className="hub-ident">
          <HubIdent />
          {desktopBridge() && (
            <button className="btn small" onClick={() => setSettingsOpen(true)}>
              Settings
            </button>
          )}
        </div>
      </header>
      <ConnectionBanner />
      <CapacityBanner />
      <main className="content">
        {view === 'workers' && <WorkersView />}
        {view === 'wall' && <WallView />}
        {view === 'hubs' && <HubsView />}
        {view === 'jobs' && <JobsView />}
        {view === 'charts' && <ChartsView />}
      </main>
      {/* keyed: a new question starts with an empty field */}
      {ask && <TokenPrompt key={ask} scope={ask} />}
      {settingsOpen && <DesktopSettings onClose={() => setSettingsOpen(false)} />}
    </div>
  );
}
