import { describe, expect, it } from 'vitest';
import { RESOURCES } from '../../src/resources/index.js';
import { findRoute, ROUTES, routeName } from '../../src/simulator/routes.js';

/** The simulator's one route table: what a path finds, and the name the stats give it. */

const API = '/api/v1/projects/demo';

describe('the route table', () => {
  it('holds each method and path once, at the origin and in the API alike', () => {
    const keys = ROUTES.map((route) => `${route.api === undefined ? 'origin' : 'api'} ${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('has every collection listed by GET and POST, and counted but for relationships', () => {
    for (const resource of RESOURCES) {
      expect(findRoute(`${API}/${resource}`)?.route.method).toBe('GET');
      expect(findRoute(`${API}/${resource}/list`)?.route.method).toBe('POST');
      const count = findRoute(`${API}/${resource}/aggregate`)?.route;
      expect(count?.serve === undefined, resource).toBe(resource === 'relationships');
    }
  });
});

describe('findRoute', () => {
  it.each([
    // [path, the route's method and path, the project; undefined: no route]
    ['/login/status', 'GET /login/status', undefined],
    ['/logout', 'GET /logout', undefined],
    ['/login', 'POST /login', undefined],
    ['/oauth2/token', 'POST /oauth2/token', undefined],
    [`${API}/events`, 'GET /events', 'demo'],
    [`${API}/events/list`, 'POST /events/list', 'demo'],
    [`${API}/events/aggregate`, 'POST /events/aggregate', 'demo'],
    ['/api/v1/projects/other/assets', 'GET /assets', 'other'],
    [`${API}/timeseries/data/list`, 'POST /timeseries/data/list', 'demo'],
    [`${API}/timeseries/data/latest`, 'POST /timeseries/data/latest', 'demo'],
    [`${API}/timeseries/subscriptions/byids`, 'POST /timeseries/subscriptions/byids', 'demo'],
    [`${API}/timeseries/subscriptions/data/list`, 'POST /timeseries/subscriptions/data/list', 'demo'],
    [`${API}/models/views`, 'GET /models/views', 'demo'],
    [`${API}/models/views/`, 'GET /models/views', 'demo'],
    [`${API}/models/views/byids`, 'POST /models/views/byids', 'demo'],
    [`${API}/models/views/byids/`, 'POST /models/views/byids', 'demo'],
    [`${API}/models/instances/list/`, 'POST /models/instances/list', 'demo'],
    [`${API}/models/instances/sync`, 'POST /models/instances/sync', 'demo'],
    [`${API}/models/instances/aggregate`, 'POST /models/instances/aggregate', 'demo'],
    // Only the data-modeling routes take one more slash, and only one.
    [`${API}/events/`, undefined, undefined],
    [`${API}/events/list/`, undefined, undefined],
    [`${API}/models/views//`, undefined, undefined],
    [`${API}/timeseries/data/list/`, undefined, undefined],
    [`${API}/events/data/list`, undefined, undefined],
    [`${API}/models/instances`, undefined, undefined],
    [`${API}`, undefined, undefined],
    [`${API}/`, undefined, undefined],
    ['/api/v1/projects//events', undefined, undefined],
    ['/events', undefined, undefined],
    ['/login/status/', undefined, undefined],
    [`${API}/oauth2/token`, undefined, undefined],
    ['/', undefined, undefined],
  ])('%s', (path, route, project) => {
    const found = findRoute(path);
    expect(found === undefined ? undefined : `${found.route.method} ${found.route.path}`).toBe(route);
    expect(found?.project).toBe(project);
  });
});

describe('a path with a route per method', () => {
  it('finds the route of the method, and one of its routes for another method (whose 405 names it)', () => {
    const path = `${API}/timeseries/subscriptions`;
    expect(findRoute(path, 'GET')?.route.method).toBe('GET');
    expect(findRoute(path, 'POST')?.route.method).toBe('POST');
    expect(findRoute(path, 'DELETE')?.route.path).toBe('/timeseries/subscriptions');
    expect(findRoute(path, 'POST')?.route.api?.capability).toBe('timeSeriesAcl:WRITE');
    expect(findRoute(path, 'GET')?.route.api?.capability).toBe('timeSeriesAcl:READ');
    expect(routeName('POST', path)).toBe('POST /timeseries/subscriptions');
  });
});

describe('routeName', () => {
  it.each([
    ['GET', `${API}/events`, 'GET /events'],
    ['POST', `${API}/events`, 'POST /events'],
    ['DELETE', `${API}/models/views/`, 'DELETE /models/views'],
    ['POST', `${API}/relationships/aggregate`, 'POST /relationships/aggregate'],
    ['POST', `${API}/timeseries/data/list`, 'POST /timeseries/data/list'],
    ['POST', '/oauth2/token', 'POST /oauth2/token'],
    ['GET', '/nope', 'GET /nope'],
    ['GET', `${API}/events/`, `GET ${API}/events/`],
    [undefined, `${API}/assets`, 'undefined /assets'],
  ])('%s %s: %s', (method, path, name) => {
    expect(routeName(method, path)).toBe(name);
  });
});
