/**
 * A secret given as `-` on the command line is read from standard input instead: an argument
 * is visible to every user of the machine in `ps` and stays in the shell's history.
 */
import { UsageError } from '../cli-kit/output.js';

/** `value`, or for `-` the first line of standard input (up to its end). */
export async function secretArgument(option: string, value: string): Promise<string> {
  if (value !== '-') return value;
  if (process.stdin.isTTY) process.stderr.write(`${option}: paste the secret, then Enter and Ctrl-D\n`);
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  const secret = text.split(/\r?\n/)[0]?.trim() ?? '';
  if (secret === '') {
    throw new UsageError(
      `${option} - reads the secret from standard input, which was empty; e.g. printf '%s' "$SECRET" | wsops … ${option} -`,
    );
  }
  return secret;
}
