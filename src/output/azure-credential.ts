import { ConfigError } from '../errors.js';

/**
 * Which credential an Azure output uses, chosen from the environment in the order Azure's own
 * tools read it (the Azure CLI, azcopy): a connection string, else an account key, else a SAS
 * token, else DefaultAzureCredential (workload identity on AKS, a managed identity, the Azure
 * CLI's login, a service principal in AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET). Never
 * from the job file: a secret there would be at rest in a file others read.
 */
export type AzureCredentialChoice =
  | { kind: 'connection string'; variable: 'AZURE_STORAGE_CONNECTION_STRING'; connectionString: string; secrets: string[] } |
  { kind: 'account key'; variable: 'AZURE_STORAGE_KEY'; accountKey: string; secrets: string[] } |
  { kind: 'SAS token'; variable: 'AZURE_STORAGE_SAS_TOKEN'; sasToken: string; secrets: string[] } |
  { kind: 'DefaultAzureCredential'; secrets: string[] };

/** The credential of an Azure output as messages name it: its kind and where it was read, never its value. */
export function credentialName(choice: AzureCredentialChoice): string {
  if (choice.kind === 'DefaultAzureCredential') {
    return 'DefaultAzureCredential (workload identity, managed identity, Azure CLI login, or AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET)';
  }
  return `the ${choice.kind} in ${choice.variable}`;
}

/** What to check of a credential Azure refused, by its kind. */
export function credentialFix(choice: AzureCredentialChoice): string {
  switch (choice.kind) {
    case 'connection string':
    case 'account key':
      return 'check that the key is one of the account\'s two current keys (a rotated key is refused), and that the account allows key access';
    case 'SAS token':
      return 'check that it has not expired (se=), that it was signed for this account and container, and that it grants racwdl (read, add, create, write, delete, list)';
    case 'DefaultAzureCredential':
      return 'check that the identity is signed in (az login, workload identity, managed identity) and holds the role Storage Blob Data Contributor on the container';
  }
}

/** Reads the credential from `env` (pure: the environment is handed in). */
export function chooseCredential(env: Readonly<Record<string, string | undefined>>): AzureCredentialChoice {
  const set = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const connectionString = set('AZURE_STORAGE_CONNECTION_STRING');
  if (connectionString !== undefined) {
    const parts = connectionStringParts(connectionString);
    const secrets = [connectionString, parts.AccountKey, parts.SharedAccessSignature].filter((v) => v !== undefined);
    return { kind: 'connection string', variable: 'AZURE_STORAGE_CONNECTION_STRING', connectionString, secrets };
  }
  const accountKey = set('AZURE_STORAGE_KEY');
  if (accountKey !== undefined) return { kind: 'account key', variable: 'AZURE_STORAGE_KEY', accountKey, secrets: [accountKey] };
  const sas = set('AZURE_STORAGE_SAS_TOKEN');
  if (sas !== undefined) {
    const sasToken = sas.replace(/^\?/, '');
    const signature = new URLSearchParams(sasToken).get('sig');
    if (signature === null || signature === '') {
      throw new ConfigError('AZURE_STORAGE_SAS_TOKEN holds no signature (sig=...): give the whole SAS token, e.g. sv=...&sp=racwdl&sig=....');
    }
    return { kind: 'SAS token', variable: 'AZURE_STORAGE_SAS_TOKEN', sasToken, secrets: [sas, sasToken, signature] };
  }
  return { kind: 'DefaultAzureCredential', secrets: [] };
}

/** The `Name=value;` parts of a connection string (a value may hold '=', a key's padding). */
export function connectionStringParts(text: string): Record<string, string> {
  const parts: Record<string, string> = {};
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) parts[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return parts;
}
