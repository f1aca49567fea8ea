/** `bytes` in the largest binary unit that divides it: "1 MiB", "1536 KiB", "1000 bytes". */
export function formatByteSize(bytes: number): string {
  for (const [unit, size] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}
