/**
 * Reads a QR code drawn as the console draws it (an SVG of unit squares, `M<x>,<y>h<s>v<s>h-<s>z`)
 * the way a phone does: the squares painted into pixels, then decoded by jsQR.
 */
import * as jsqrModule from 'jsqr';

type Decode = (pixels: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
// jsqr is CommonJS whose typings declare an ES default export; either shape is taken.
const jsQR = ((jsqrModule as unknown as { default?: Decode }).default ?? jsqrModule) as Decode;

export function readSvgQr(svg: string): string | undefined {
  const box = /viewBox="0 0 (\d+) (\d+)"/.exec(svg);
  if (!box) return undefined;
  const width = Number(box[1]);
  const height = Number(box[2]);
  const pixels = new Uint8ClampedArray(width * height * 4).fill(255);
  for (const [, x, y, size] of svg.matchAll(/M(\d+),(\d+)h(\d+)v\d+h-\d+z/g)) {
    for (let dy = 0; dy < Number(size); dy++)
      for (let dx = 0; dx < Number(size); dx++) {
        const at = ((Number(y) + dy) * width + Number(x) + dx) * 4;
        pixels[at] = pixels[at + 1] = pixels[at + 2] = 0;
      }
  }
  return jsQR(pixels, width, height)?.data;
}
