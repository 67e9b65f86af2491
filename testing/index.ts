// Placeholder for the package's "./testing" entry; the test helpers' own index replaces it.
export { systemClock } from '../functions/protocol/ports';
