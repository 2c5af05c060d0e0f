/** What an authenticated API key grants a request: built by the key cache, checked by auth.ts. */
export interface KeyContext {
  keyId: string;
  workspaceId: string;
  environment: string;
  scopes: readonly string[];
  expiresAt: string;
  modules: ReadonlySet<string>;
}
