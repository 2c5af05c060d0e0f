export interface Row {
  benchmark: string;
  result: string;
  goal: string;
  met: boolean | undefined;
}

export function printTable(title: string, rows: readonly Row[]): string {
  const headers = ['benchmark', 'result', 'goal', 'met'];
  const cells = rows.map((r) => [r.benchmark, r.result, r.goal, r.met === undefined ? '' : r.met ? 'yes' : 'NO']);
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]) => `| ${c.map((v, i) => v.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const text = [`### ${title}`, '', line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
  process.stdout.write(`\n${text}\n`);
  return text;
}
