/** The console's page: placeholder until the pages land. */
import { render } from 'preact';
import type { ConsoleConfig } from '../contract';

function App(props: { readonly config?: ConsoleConfig }) {
  return <p>console {props.config?.where ?? ''}</p>;
}

render(<App />, document.body);
