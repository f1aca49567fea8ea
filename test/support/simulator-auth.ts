import type { ClientCredential, Simulator, UserCredential } from '../../src/simulator/index.js';
import { send } from './http.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Calls the simulator's token endpoint by hand, as a user does to get a token for `type: token`. */
export async function issueToken(sim: Simulator, client: ClientCredential): Promise<string> {
  const reply = await send(sim.tokenUrl, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.id,
      client_secret: client.secret,
    }).toString(),
  });
  if (reply.status !== 200) throw new Error(`token endpoint answered ${reply.status}: ${reply.text}`);
  return reply.json<{ access_token: string }>().access_token;
}

/** Signs in at the simulator's `/login`; returns the `session=...` pair to use as the Cookie header. */
export async function loginCookie(sim: Simulator, user: UserCredential): Promise<string> {
  const reply = await send(`${sim.origin}/login`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ user: user.user, password: user.password }).toString(),
  });
  const header = reply.headers['set-cookie'];
  const pair = (Array.isArray(header) ? header[0] : header)?.split(';')[0] ?? '';
  if (reply.status !== 200 || !/^session=.+/.test(pair)) {
    throw new Error(`login answered ${reply.status} with cookie '${pair ? 'session=…' : ''}'`);
  }
  return pair;
}
