/** A one-line progress bar on a terminal; silent when stderr is not a terminal (CI, pipes). */
export function progressBar(label: string): ((done: number, total: number) => void) & { finish(): void } {
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let lastDraw = 0;
  const draw = (done: number, total: number) => {
    if (!tty) return;
    const now = Date.now();
    if (now - lastDraw < 100 && done < total) return;
    lastDraw = now;
    const ratio = total > 0 ? Math.min(1, done / total) : 1;
    const width = 30;
    const filled = Math.round(ratio * width);
    const rate = done / Math.max(0.001, (now - started) / 1000);
    process.stderr.write(
      `\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${done}/${total} ${Math.round(rate)}/s`,
    );
  };
  return Object.assign(draw, {
    finish() {
      if (tty) process.stderr.write('\n');
    },
  });
}

/**
 * A one-line counter for work of unknown size (an import read from a pipe): lines so far, lines
 * per second and refusals so far; silent when stderr is not a terminal.
 */
export function lineCounter(label: string): ((lines: number, errors: number) => void) & { finish(): void } {
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let lastDraw = 0;
  let drawn = false;
  let last = { lines: 0, errors: 0 };
  const draw = (lines: number, errors: number, force = false) => {
    last = { lines, errors };
    if (!tty) return;
    const now = Date.now();
    if (now - lastDraw < 100 && !force) return;
    lastDraw = now;
    drawn = true;
    const rate = lines / Math.max(0.001, (now - started) / 1000);
    process.stderr.write(`\r${label}: ${lines} lines, ${Math.round(rate)} records/s, ${errors} refused\u001b[K`);
  };
  return Object.assign(draw, {
    finish() {
      // The last figures, which the 100 ms throttle may have skipped.
      if (tty && drawn) {
        draw(last.lines, last.errors, true);
        process.stderr.write('\n');
      }
    },
  });
}
