/** An ATX heading (`## Title`) of a Markdown file; lines inside fenced blocks are not headings. */
export interface Heading {
  level: number;
  text: string;
  /** 1-based line number. */
  line: number;
}

const FENCE = /^ *(`{3,}|~{3,})/;
const ATX = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

/** Every heading of a Markdown text, in order. */
export function headings(markdown: string): Heading[] {
  const found: Heading[] = [];
  let fence: string | undefined;
  markdown.split(/\r?\n/).forEach((line, i) => {
    const open = FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      const closes = open !== undefined && open[0] === fence[0] && open.length >= fence.length && line.trim() === open;
      if (closes) fence = undefined;
      return;
    }
    if (open !== undefined) {
      fence = open;
      return;
    }
    const heading = ATX.exec(line);
    if (heading !== null) found.push({ level: heading[1]?.length ?? 0, text: heading[2] ?? '', line: i + 1 });
  });
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation (backticks included) dropped, each space a hyphen. */
export function slug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a Markdown text's headings; a repeated one gets `-1`, `-2`... as on GitHub. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const { text } of headings(markdown)) {
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}
