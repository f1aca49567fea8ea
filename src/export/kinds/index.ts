/** The stream kinds: collections, datapoints and instances. */
export * from './collections/index.js';
export * from './datapoints/index.js';
export * from './instances/index.js';
