// Placeholder for the package's "." and "./cdk" entry (the CDK constructs); the constructs' own index replaces it.
export { ScheduledJobs } from './scheduled-jobs';
