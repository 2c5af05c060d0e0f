/**
 * The fetch API's types as the client's declarations name them: the consumer's own wherever its
 * project has them (the DOM lib, or @types/node), so a `fetch` passed in is checked against the
 * real types; otherwise only the members the client uses. The client's .d.ts thus compile in a
 * Node project with `lib: ["es2022"]` and neither DOM nor @types/node, where `Response`,
 * `RequestInit` and `AbortSignal` are not declared at all. Types only: nothing here runs.
 */

/** The instance type of a global class, when the consumer's project declares one of that name. */
type GlobalInstance<Name extends string, Fallback> = typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : Fallback;

/** The members of an AbortSignal the client reads. */
interface AbortSignalMembers {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** The members of a fetch Response the client reads. */
interface ResponseMembers {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

/** What the client passes to fetch. */
interface RequestInitMembers {
  method?: string;
  headers?: Record<string, string>;
  signal?: AbortSignalLike;
}

export type AbortSignalLike = GlobalInstance<'AbortSignal', AbortSignalMembers>;
export type ResponseLike = GlobalInstance<'Response', ResponseMembers>;
/** RequestInit has no value of its name: it is read off the global fetch's second parameter. */
export type RequestInitLike = typeof globalThis extends { fetch: (input: never, init?: infer I) => unknown }
  ? NonNullable<I>
  : RequestInitMembers;
