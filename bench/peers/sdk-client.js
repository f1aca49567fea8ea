// What the SDK peers (sdk-drain.js, sdk-datapoints.js) share: a CogniteClient authenticated with
// the client-credentials grant at --token-url, as an SDK user sets it up (`oidcTokenProvider`,
// whose token is fetched again when it is within a leeway of expiry), and the way a peer fails.
import { CogniteClient } from '@cognite/sdk';

const REFRESH_LEEWAY_MS = 30_000;

/** Ends the peer with a message on stderr (stdout carries only the result line). */
export function failWith(peer) {
  return (message) => {
    console.error(`${peer}: ${message}`);
    process.exit(1);
  };
}

/** A client for `project` at `origin`, with a token from `tokenUrl` for `clientId`/`clientSecret`. */
export function sdkClient({ origin, project, tokenUrl, clientId, clientSecret, fail }) {
  let token;
  async function oidcTokenProvider() {
    if (token !== undefined && Date.now() < token.expiresAt - REFRESH_LEEWAY_MS) return token.value;
    const response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
    });
    if (!response.ok) fail(`token endpoint answered ${response.status}`);
    const body = await response.json();
    token = { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 };
    return token.value;
  }
  return new CogniteClient({ appId: 'bulk-extract-bench', project, baseUrl: origin, oidcTokenProvider });
}
