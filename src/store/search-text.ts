/**
 * The one word rule of text search, for both dialects: lower case, diacritics removed, every
 * run of letters or digits is a word, at most MAX_WORD_LENGTH code points. Records store their
 * words pre-split (`search_text`, words joined by single spaces) and queries are split by the
 * same rule; neither database tokenises again (SQLite FTS5 uses the `ascii` tokenizer, which
 * splits only on ASCII punctuation and space; PostgreSQL builds the tsvector from the word
 * array with no parser), so both find exactly the same records for the same query.
 * `AST-000123` is stored as `ast 000123`, so `ast-0001` finds it by word prefixes.
 */
export const MAX_WORD_LENGTH = 100;

/** Text of ASCII only: NFKD leaves it as it is, it has no marks, and its letters and digits are [A-Za-z0-9]. */
const NOT_ASCII = /[^\p{ASCII}]/u;
const ASCII_WORD = /[a-z0-9]+/g;

export function searchWords(text: string): string[] {
  // Most values are ASCII: the same words without normalizing or Unicode property classes.
  const words = !NOT_ASCII.test(text)
    ? (text.toLowerCase().match(ASCII_WORD) ?? [])
    : (text
        .normalize('NFKD')
        .replace(/\p{M}+/gu, '')
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu) ?? []);
  // Bounded so every word fits a PostgreSQL lexeme (2047 bytes); cut by code point, never
  // inside a surrogate pair. A longer query word still finds the word by its prefix.
  return words.map((w) => (w.length > MAX_WORD_LENGTH ? Array.from(w).slice(0, MAX_WORD_LENGTH).join('') : w));
}

export function searchText(values: readonly unknown[]): string {
  let out = '';
  for (const v of values) {
    if (typeof v !== 'string') continue;
    for (const w of searchWords(v)) out = out ? `${out} ${w}` : w;
  }
  return out;
}

/** FTS5 query: every word as a quoted prefix term, all required. Words hold no quote. */
export function fts5Query(words: readonly string[]): string {
  return words.map((w) => `"${w.replace(/"/g, '""')}"*`).join(' AND ');
}

/**
 * The PostgreSQL tsvector of a record: its stored words as lexemes, unparsed. The GIN index
 * (migration 0004_search_words) is on exactly this expression.
 */
export const PG_SEARCH_VECTOR = "array_to_tsvector(array_remove(string_to_array(search_text, ' '), ''))";

/**
 * tsquery literal (cast with ::tsquery, not to_tsquery, so no parser drops a character the
 * word rule keeps): every word as a quoted prefix lexeme, all required.
 */
export function tsQuery(words: readonly string[]): string {
  return words.map((w) => `'${w.replace(/\\/g, '\\\\').replace(/'/g, "''")}':*`).join(' & ');
}
