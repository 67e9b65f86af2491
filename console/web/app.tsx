/** The console's shell: reads /api/config, follows the hash route, and renders the header and the current page. */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleConfig } from '../contract';
import { AllTimelinePage } from './all-timeline-page';
import { api, errorText } from './api';
import { AttentionPage } from './attention-page';
import { JobsPage } from './jobs-page';
import { OccurrencePage } from './occurrence-page';
import { parseHash, type Route } from './route';
import { TimelinePage } from './timeline-page';
import { ErrorNote } from './widgets';

/** The time now: the browser's clock, offset to the server's (its `now` in /api/config) so relative times agree. */
function clockFrom(config: ConsoleConfig): () => number {
  const offset = Date.parse(config.now) - Date.now();
  return Math.abs(offset) > 2000 ? () => Date.now() + offset : () => Date.now();
}

/** The whole page. */
export function App() {
  const [config, setConfig] = useState<ConsoleConfig>();
  const [error, setError] = useState<string>();
  const [route, setRoute] = useState<Route>(() => parseHash(location.hash));
  useEffect(() => {
    api.config().then(setConfig, (e: unknown) => setError(errorText(e)));
    const onHash = () => {
      delete document.body.dataset.ready;
      setRoute(parseHash(location.hash));
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    document.title = `${titleOf(route)} · occurrences console`;
    window.scrollTo(0, 0);
  }, [route]);
  const now = config ? clockFrom(config) : () => Date.now();
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          occurrences <span>console</span>
        </a>
        <nav class="top-nav" aria-label="Pages">
          <a href="#/">Needs attention</a> <a href="#/timeline">Timeline</a> <a href="#/jobs">Jobs</a>
        </nav>
        {config && (
          <div class="where">
            <span title="What the console is connected to">{config.where}</span>
            <span class="muted" title="Actions are recorded as">
              as {config.operator}
            </span>
            {config.readOnly && (
              <span class="badge readonly" data-test="read-only">
                read-only
              </span>
            )}
          </div>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorNote error={error} />
        {config && <Page route={route} config={config} now={now} />}
      </main>
    </>
  );
}

function Page(props: { readonly route: Route; readonly config: ConsoleConfig; readonly now: () => number }) {
  const { route, config, now } = props;
  switch (route.page) {
    case 'jobs':
      return <JobsPage config={config} now={now} />;
    case 'attention':
      return <AttentionPage route={route} now={now} />;
    case 'all-timeline':
      return <AllTimelinePage key={route.window ?? ''} window={route.window} now={now} />;
    case 'timeline':
      return (
        <TimelinePage
          key={`${route.jobId}\n${route.key ?? ''}`}
          config={config}
          jobId={route.jobId}
          scheduleKey={route.key}
          from={route.from}
          to={route.to}
          now={now}
        />
      );
    case 'occurrence':
      return (
        <OccurrencePage
          key={`${route.jobId}\n${route.key ?? ''}\n${route.time}`}
          config={config}
          jobId={route.jobId}
          time={route.time}
          scheduleKey={route.key}
          now={now}
        />
      );
    case 'not-found':
      return (
        <section>
          <h1>Not found</h1>
          <p>
            The console has no page at <code>{route.hash}</code>. <a href="#/jobs">Back to the jobs</a>.
          </p>
        </section>
      );
  }
}

function titleOf(route: Route): string {
  switch (route.page) {
    case 'jobs':
      return 'Jobs';
    case 'attention':
      return 'Needs attention';
    case 'all-timeline':
      return 'Every job on one time axis';
    case 'timeline':
      return `${route.jobId} timeline`;
    case 'occurrence':
      return `${route.jobId} at ${route.time}`;
    case 'not-found':
      return 'Not found';
  }
}
