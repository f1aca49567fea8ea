import { ConfigError } from '../errors.js';

/** Where an Azure output lives: the Blob service of an account, a container in it, a prefix in that. */
export interface AzureLocation {
  /** The storage account (`onelake` for OneLake); undefined for `az://` until the config names it. */
  account: string | undefined;
  /**
   * The Blob service endpoint the requests go to, e.g. `https://acc.blob.core.windows.net` (the
   * Blob API, which ADLS Gen2 and OneLake accept too); undefined for `az://` without an account.
   */
  serviceUrl: string | undefined;
  /** The container (a OneLake workspace). */
  container: string;
  /** Blob names under it, without leading or trailing '/'; '' for the whole container. */
  prefix: string;
  /** How messages name the output: the URL as given, without a trailing '/'. */
  location: string;
}

const FORMS =
  'abfss://<container>@<account>.dfs.core.windows.net/<path>, az://<container>/<path> (with output.azure.account), ' +
  'https://<account>.blob.core.windows.net/<container>/<path> or abfss://<workspace>@onelake.dfs.fabric.microsoft.com/<item>.Lakehouse/Files/<path>';

/**
 * Reads an Azure output URL. `abfss://` (Spark, Databricks, Fabric) names the account's Data Lake
 * endpoint, `<account>.dfs.<cloud suffix>`; the store talks to its Blob endpoint,
 * `<account>.blob.<cloud suffix>`, which serves the same data (sovereign clouds alike). OneLake is
 * the account `onelake` under `fabric.microsoft.com`, its workspace the container. `az://` takes
 * the account from output.azure.account.
 */
export function parseAzureUrl(url: string, account?: string): AzureLocation {
  // An '@' ahead of a host is part of abfss://; elsewhere, and anything after '?', could hold a credential: never repeat it.
  const shown = /[?#]/.test(url) || (!url.toLowerCase().startsWith('abfss://') && url.includes('@')) ? 'a value with "?", "#" or "@"' : JSON.stringify(url);
  const fail = (why: string) => new ConfigError(`output.dir must be an Azure URL, ${FORMS} (${why}); got ${shown}.`);
  if (/[?#]/.test(url)) throw fail('no query string or fragment: a SAS token goes in AZURE_STORAGE_SAS_TOKEN, never in the URL');
  const abfss = /^abfss:\/\/([^@/]*)@([^/]*)(.*)$/.exec(url);
  const az = /^az:\/\/([^/]*)(.*)$/.exec(url);
  const https = /^https:\/\/([^/]*)\/([^/]*)(.*)$/.exec(url);
  let host: string;
  let container: string;
  let rest: string;
  if (abfss !== null) {
    [, container = '', host = '', rest = ''] = abfss;
    if (!/\.dfs\./.test(host)) throw fail(`abfss:// names the Data Lake endpoint <account>.dfs.<cloud>; got the host ${JSON.stringify(host)}`);
    host = host.replace('.dfs.', '.blob.');
  } else if (az !== null) {
    [, container = '', rest = ''] = az;
    host = '';
  } else if (https !== null) {
    [, host = '', container = '', rest = ''] = https;
    if (!/\.blob\./.test(host)) throw fail(`https:// names the Blob endpoint <account>.blob.<cloud>; got the host ${JSON.stringify(host)}`);
  } else {
    throw fail('it must start with abfss://, az:// or https://');
  }
  if (container === '') throw fail('the container is empty');
  const hostAccount = host === '' ? undefined : host.slice(0, host.indexOf('.'));
  const oneLake = hostAccount === 'onelake';
  const badContainer = oneLake ? workspaceProblem(container) : containerNameProblem(container);
  if (badContainer !== undefined) throw fail(`container name: ${badContainer}`);
  const prefix = rest.replace(/^\/+|\/+$/g, '');
  const segments = prefix === '' ? [] : prefix.split('/');
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw fail('the path has an empty, "." or ".." segment');
  }
  // An item by name and type, or by its id.
  const oneLakeFiles = /^([^/]+\.(Lakehouse|Warehouse|KQLDatabase)|[0-9a-f-]{36})\/Files(\/|$)/i;
  if (oneLake && !oneLakeFiles.test(prefix)) {
    throw fail('a OneLake path is <item>.Lakehouse/Files/<path>: OneLake accepts files only under an item\'s Files folder');
  }
  const named = hostAccount ?? account;
  if (named !== undefined && !oneLake) {
    const badAccount = accountNameProblem(named);
    if (badAccount !== undefined) throw fail(`account name: ${badAccount}`);
  }
  if (hostAccount !== undefined && account !== undefined && account !== hostAccount) {
    throw new ConfigError(`output.azure.account is ${JSON.stringify(account)}, but output.dir names the account ${JSON.stringify(hostAccount)}: remove output.azure.account, or make them agree.`);
  }
  const serviceUrl = host !== '' ? `https://${host.toLowerCase()}` : named === undefined ? undefined : `https://${named}.blob.core.windows.net`;
  const location = url.replace(/\/+$/, '');
  return { account: named, serviceUrl, container, prefix, location };
}

/** What breaks Azure's container naming rules, or undefined. */
function containerNameProblem(name: string): string | undefined {
  if (name === '$root' || name === '$web') return undefined;
  if (name.length < 3 || name.length > 63) return '3 to 63 characters';
  if (!/^[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]$/.test(name)) {
    return 'lowercase letters, digits and single "-", starting and ending with a letter or digit';
  }
  return undefined;
}

/** A OneLake workspace: its name or its id; Fabric allows more characters than a container does. */
function workspaceProblem(name: string): string | undefined {
  if (name.length > 256) return 'at most 256 characters';
  return /[\\"<>|*?:]/.test(name) ? 'a workspace name without \\ " < > | * ? :' : undefined;
}

/** What breaks Azure's storage account naming rules, or undefined. */
function accountNameProblem(name: string): string | undefined {
  return /^[a-z0-9]{3,24}$/.test(name) ? undefined : '3 to 24 lowercase letters and digits';
}
