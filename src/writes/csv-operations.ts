/**
 * A CSV file of one register as the import's NDJSON operations (the CLI's `--register` and the
 * console's upload share it). The first row names the fields; each later row becomes one
 * upsert line with the same number, so a refused line's number is the CSV's row number (the
 * header is row 1, a blank row keeps its number and is skipped). Cells are text; a cell is
 * turned into the field's declared kind (whole numbers, true/false, JSON for lists and id
 * lists), an empty cell leaves the field out (null, or an empty list), and anything that does
 * not convert is passed on as text so that the import's one validator refuses it with its
 * pointer.
 *
 * What is wrong with the file itself rather than with a record (an unknown or repeated column,
 * a row with the wrong number of cells, an unclosed quote, bytes that are not UTF-8) stops the
 * conversion with one AppError naming the row or line: lines before it were already handed to
 * the import (a dry run or --atomic writes none of them).
 */
import { Readable } from 'node:stream';
import { AppError } from '../errors.js';
import type { Register } from '../registers/define.js';
import type { Field } from '../registers/fields.js';
import { clip } from '../registers/record-input.js';
import { MAX_LINE_BYTES } from './import.js';

/** NDJSON is handed on in pieces of about this many characters (one row per yield is slow). */
const CHUNK_CHARS = 64 * 1024;

export async function* csvOperations(source: AsyncIterable<Buffer | string>, register: Register): AsyncGenerator<string> {
  // Where the last whole row ended, noted as the parser reads it: an unclosed quote is found
  // only at the end of the file, and is reported where its row began.
  const read = { rows: 0, lines: 0 };
  // Loaded by the first CSV import rather than at every start (ADR 37).
  const { parse } = await import('csv-parse');
  // max_record_size bounds what an unclosed quote can make the parser hold.
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: false,
    max_record_size: MAX_LINE_BYTES,
    on_record: (cells: string[], context: { records: number; lines: number }) => {
      read.rows = context.records;
      read.lines = context.lines;
      return cells;
    },
  });
  const input = Readable.from(utf8Text(source));
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let header: string[] | undefined;
  let row = 0;
  let out = '';
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      row++;
      if (!header) {
        header = checkHeader(register, cells);
        out += '\n';
        continue;
      }
      if (cells.every((c) => c === '')) {
        out += '\n';
        continue;
      }
      if (cells.length !== header.length) {
        throw new AppError(
          'invalid_parameter',
          `CSV row ${row} has ${cells.length} cells but the header has ${header.length}; quote a cell that holds a comma or a line break`,
        );
      }
      const record: Record<string, unknown> = {};
      for (const [i, name] of header.entries()) {
        const cell = cells[i] as string;
        if (cell !== '') record[name] = cellValue(register.allFields[name] as Field, cell);
      }
      out += `${JSON.stringify({ register: register.path, op: 'upsert', record })}\n`;
      if (out.length >= CHUNK_CHARS) {
        yield out;
        out = '';
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof NotUtf8) {
      throw new AppError('invalid_parameter', 'the CSV file is not UTF-8 text; save it as "CSV UTF-8" and import it again');
    }
    if ((err as { code?: string }).code === 'CSV_QUOTE_NOT_CLOSED') {
      throw new AppError(
        'invalid_parameter',
        `CSV row ${read.rows + 1} (from line ${read.lines + 1} of the file) opens a quoted cell that is never closed: close the quote ("), or double a quote inside a quoted cell ("")`,
      );
    }
    // csv-parse's own messages name the line; keep them to one line.
    const message = (err as Error).message.replace(/\s+/g, ' ').slice(0, 300);
    throw new AppError('invalid_parameter', `the CSV file could not be read: ${message}`);
  } finally {
    input.destroy();
  }
  if (out) yield out;
}

class NotUtf8 extends Error {}

/**
 * The bytes as strict UTF-8 text. A spreadsheet saved in a legacy encoding (Windows-1252: "Müller")
 * is refused rather than imported with replacement characters in people's names.
 */
async function* utf8Text(source: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of source) yield typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const tail = decoder.decode();
    if (tail) yield tail;
  } catch (err) {
    if (err instanceof TypeError) throw new NotUtf8();
    throw err;
  }
}

/** The header's names, each a field of the register, none twice. */
function checkHeader(register: Register, cells: readonly string[]): string[] {
  const names = cells.map((c) => c.trim());
  const seen = new Set<string>();
  for (const [i, name] of names.entries()) {
    if (name === '') throw new AppError('invalid_parameter', `CSV column ${i + 1} has no name; the first row names each column's field`);
    // Own fields only: `in` would take __proto__ or constructor, which every object inherits, for fields.
    if (!Object.hasOwn(register.allFields, name)) {
      throw new AppError(
        'invalid_parameter',
        `CSV column "${clip(name)}" is not a field of ${register.path}; fields are: ${Object.keys(register.allFields).join(', ')}`,
      );
    }
    if (seen.has(name)) throw new AppError('invalid_parameter', `CSV column "${clip(name)}" is named twice`);
    seen.add(name);
  }
  if (!seen.has('id')) throw new AppError('invalid_parameter', `the CSV file has no id column; every ${register.resource} needs its id`);
  return names;
}

/** A cell as the field's kind, or the text itself when it does not convert (the validator says why). */
export function cellValue(field: Field, cell: string): unknown {
  switch (field.kind) {
    case 'integer':
      return /^-?\d+$/.test(cell) ? Number(cell) : cell;
    case 'boolean': {
      // Spreadsheets write TRUE and FALSE.
      const lower = cell.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : cell;
    }
    case 'list':
    case 'ids':
      try {
        return JSON.parse(cell) as unknown;
      } catch {
        return cell;
      }
    default:
      return cell;
  }
}
