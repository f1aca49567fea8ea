// What the raw peers (raw-drain.js, raw-points.js) share: failing with a message, the credential
// header, the base URL and its path. Only the result line goes to stdout.

/** Ends the process with `name: message` on stderr. */
export function failer(name) {
  return (message) => {
    console.error(`${name}: ${message}`);
    process.exit(1);
  };
}

/** The peer's target from its --base-url, --token / --api-key (and --gzip) flags. */
export function rawTarget(values, fail) {
  if (values['base-url'] === undefined) fail('--base-url is required');
  const auth =
    values.token !== undefined
      ? { authorization: `Bearer ${values.token}` }
      : values['api-key'] !== undefined
        ? { 'api-key': values['api-key'] }
        : fail('give --token or --api-key');
  const base = new URL(values['base-url']);
  const headers = { ...auth, ...(values.gzip ? { 'accept-encoding': 'gzip' } : {}) };
  return { base, basePath: base.pathname.replace(/\/$/, ''), headers };
}
