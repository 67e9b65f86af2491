/** The console's page: bundled by console/server/page-bundle.ts (script and stylesheet), talks only to /api. */
import { render } from 'preact';
import { App } from './app';
import './console.css';
import './console-detail.css';

/** The page's root: the shell's #app, or one made here (the server's shell has only the script in its body). */
function root(): HTMLElement {
  const existing = document.getElementById('app');
  if (existing !== null) return existing;
  const made = document.createElement('div');
  made.id = 'app';
  document.body.prepend(made);
  return made;
}

render(<App />, root());
