/**
 * Splits a byte stream into NDJSON lines without holding more than one line: each line is
 * numbered from 1, decoded as strict UTF-8, and a line longer than `maxBytes` is reported (and
 * skipped to its end) instead of buffered. A last line without its newline is still a line; if
 * it was cut off, JSON.parse of it fails and the import refuses it with its number.
 * The lines that end in one chunk of the source come together, as one array: an await per
 * line cost an import about as much as reading the line.
 */
export type Line = { number: number; text: string } | { number: number; error: 'line_too_long' | 'invalid_utf8' };

export async function* ndjsonLines(source: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<Line[]> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  let number = 0;
  const finish = (): Line | undefined => {
    number++;
    if (skipping) {
      skipping = false;
      return { number, error: 'line_too_long' };
    }
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    try {
      return { number, text: decoder.decode(bytes) };
    } catch {
      return { number, error: 'invalid_utf8' };
    }
  };
  for await (const chunk of source) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const lines: Line[] = [];
    let start = 0;
    while (start < buf.length) {
      const nl = buf.indexOf(10, start);
      const end = nl === -1 ? buf.length : nl;
      if (!skipping) {
        if (size + (end - start) > maxBytes) {
          skipping = true;
          parts = [];
          size = 0;
        } else if (end > start) {
          parts.push(buf.subarray(start, end));
          size += end - start;
        }
      }
      if (nl === -1) break;
      const line = finish();
      // Blank lines (and a CRLF's lone CR) are not operations; they keep their number.
      if (line && !('text' in line && line.text.trim() === '')) lines.push(line);
      start = nl + 1;
    }
    if (lines.length) yield lines;
  }
  if (size > 0 || skipping) {
    const line = finish();
    if (line && !('text' in line && line.text.trim() === '')) yield [line];
  }
}
