/** Splits a comma- or space-separated list (`a,b c`) into distinct, trimmed, non-empty items, in order. */
export function splitList(spec: string | readonly string[]): string[] {
  const items = typeof spec === 'string' ? spec.split(/[\s,]+/) : spec;
  return [...new Set(items.map((s) => s.trim()).filter(Boolean))];
}
