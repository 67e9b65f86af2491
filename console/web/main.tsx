/** The console's page: bundled by console/server/page-bundle.ts (script and stylesheet), talks only to /api. */
import { render } from 'preact';
import { App } from './app';
import './console.css';

render(<App />, document.getElementById('app') ?? document.body);
