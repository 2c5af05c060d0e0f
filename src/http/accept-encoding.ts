/**
 * Content negotiation on `Accept-Encoding` (RFC 9110 §12.5.3): which content coding a
 * response gets. A pure function of the header and the codings this server has, so every
 * route that compresses decides alike.
 */

/** A coding name is an HTTP token; anything else in a member makes the member malformed. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** weight = OWS ";" OWS "q=" qvalue, qvalue 0–1 with at most three decimals ("q" in any case). */
const WEIGHT = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

/**
 * Each named coding with its weight. A malformed member (bad token, a weight out of range or
 * of the wrong form, any parameter other than `q`) is ignored, never an error. `x-gzip` is
 * gzip (§8.4.1.3). A coding named twice keeps its lower weight: what any member refuses is
 * not sent.
 */
export function acceptedWeights(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const member of header.split(',')) {
    const parts = member.split(';');
    const name = (parts[0] as string).trim().toLowerCase();
    if (name === '' || parts.length > 2 || !TOKEN.test(name)) continue;
    let weight = 1;
    if (parts.length === 2) {
      const m = WEIGHT.exec((parts[1] as string).trim());
      if (!m) continue;
      weight = Number(m[1]);
    }
    const coding = name === 'x-gzip' ? 'gzip' : name;
    weights.set(coding, Math.min(weights.get(coding) ?? 1, weight));
  }
  return weights;
}

/**
 * The coding to answer with: the available one of highest weight, ties going to the order of
 * `available` (the server's preference), or `identity`.
 *
 * - No header, an empty one or one naming only `identity` asks for nothing: `identity`.
 * - A coding not named takes the weight of `*`, or is not acceptable; weight 0 means "not
 *   acceptable".
 * - `identity` that is not named ranks below every acceptable coding (a client that lists
 *   `br;q=0.5` wants br rather than nothing), and wins over a coding only by a higher weight.
 * - When nothing is acceptable, not even `identity` (`*;q=0`), the answer is still identity:
 *   a read API is better answered than refused with 406.
 */
export function negotiateEncoding<C extends string>(header: string | string[] | undefined, available: readonly C[]): C | 'identity' {
  if (header === undefined) return 'identity';
  const weights = acceptedWeights(Array.isArray(header) ? header.join(',') : header);
  if (weights.size === 0) return 'identity';
  const star = weights.get('*');
  let best: C | 'identity' = 'identity';
  let bestWeight = 0;
  for (const coding of available) {
    const weight = weights.get(coding) ?? star ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  const identity = weights.get('identity') ?? star;
  return identity !== undefined && identity > bestWeight ? 'identity' : best;
}
