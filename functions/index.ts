// Placeholder for the package's "./runtime" entry (what a user's worker file imports); the functions' own index replaces it.
export { createWorkerHandler } from './worker';
