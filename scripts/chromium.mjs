// Which Chromium the browser tests drive: WSOPS_CHROMIUM when set, Debian's /usr/bin/chromium when
// installed, otherwise the one inside the @sparticuz/chromium devDependency (installed by npm ci,
// unpacked once per machine into the temporary folder). The test runner resolves it once and hands
// it to every test file in WSOPS_CHROMIUM, so parallel files never unpack it at the same time.
import { existsSync } from 'node:fs';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

export async function chromiumPath() {
  if (process.env.WSOPS_CHROMIUM) return process.env.WSOPS_CHROMIUM;
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}
