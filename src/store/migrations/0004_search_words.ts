import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';
import { MAX_WORD_LENGTH, PG_SEARCH_VECTOR } from '../search-text.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // One word rule for both dialects (src/store/search-text.ts): search_text already holds
  // the words; the databases must not split them again by rules of their own.
  if (dialect === 'sqlite') {
    await sql`DROP TABLE records_fts`.execute(db);
    // `ascii`: splits on ASCII space and punctuation only, every other character is part
    // of a word, so the stored words are the tokens, whatever the Unicode version.
    await sql`CREATE VIRTUAL TABLE records_fts USING fts5(search_text, content='records', content_rowid='rowid', tokenize='ascii')`.execute(
      db,
    );
    await sql`INSERT INTO records_fts(records_fts) VALUES ('rebuild')`.execute(db);
  } else {
    await sql`DROP INDEX IF EXISTS records_search`.execute(db);
    // Words stored before the length bound was applied: cut them as searchWords does.
    await sql`UPDATE records SET search_text = (
        SELECT string_agg(left(w, ${sql.lit(MAX_WORD_LENGTH)}), ' ' ORDER BY n)
        FROM unnest(string_to_array(search_text, ' ')) WITH ORDINALITY AS t(w, n))
      WHERE search_text ~ ${sql.lit(`[^ ]{${MAX_WORD_LENGTH + 1}}`)}`.execute(db);
    await sql`CREATE INDEX records_search ON records USING gin (${sql.raw(PG_SEARCH_VECTOR)})`.execute(db);
  }
}
