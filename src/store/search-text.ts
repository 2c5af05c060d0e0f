/**
 * Text search normalization shared by both dialects, so SQLite FTS5 and PostgreSQL tsvector see
 * the same words: lower case, diacritics removed, every run of letters or digits is a word.
 * `AST-000123` is stored as `ast 000123`, so `ast-0001` finds it by word prefixes.
 */
export function searchWords(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

export function searchText(values: readonly unknown[]): string {
  return values
    .filter((v): v is string => typeof v === 'string')
    .flatMap(searchWords)
    .join(' ');
}

/** FTS5 query: every word as a quoted prefix term, all required. Words hold no quote. */
export function fts5Query(words: readonly string[]): string {
  return words.map((w) => `"${w}"*`).join(' AND ');
}

/** tsquery: every word as a prefix term, all required. Words hold only letters and digits. */
export function tsQuery(words: readonly string[]): string {
  return words.map((w) => `${w}:*`).join(' & ');
}
