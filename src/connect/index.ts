/** connect/ turns a job's `source:` section into a platform client: its transport, authentication and CA. */
export { type ClientDeps, type ClientSource, createPlatformClient } from './create-client.js';
