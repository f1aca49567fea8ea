/**
 * Whether `dir` is one of the Azure URL forms (abfss://, az://, https://<account>.blob.<cloud>/),
 * from its form alone: the job file's checks and the CLI ask it before any store exists, and
 * output/ opens the store it names.
 */
export function isAzureUrl(dir: string): boolean {
  return /^(abfss|az):\/\//i.test(dir) || /^https:\/\/[^/]+\.blob\.[^/]+/i.test(dir);
}
