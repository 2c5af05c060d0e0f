/**
 * CSV of one register as import operations (no database: what the file becomes). Each row is
 * the upsert line with the row's number, cells typed by the field's kind, and a file that
 * cannot be read as CSV is refused with the row it stopped at.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { systems, vendors } from '../../src/registers/catalogue.js';
import type { Register } from '../../src/registers/define.js';
import { csvOperations } from '../../src/writes/csv-operations.js';

async function lines(register: Register, ...chunks: (string | Buffer)[]): Promise<string[]> {
  let text = '';
  for await (const part of csvOperations(
    (async function* () {
      yield* chunks;
    })(),
    register,
  ))
    text += part;
  return text.split('\n').slice(0, -1);
}

const refusal = async (register: Register, text: string | Buffer) => {
  const err = await lines(register, text).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof AppError, 'refused with an AppError');
  assert.equal(err.code, 'invalid_parameter');
  return err.message;
};

describe('CSV rows as import operations', () => {
  it('line N is row N: the header and blank rows are empty lines, a quoted line break stays in its row', async () => {
    const out = await lines(
      systems,
      'id,name,category,status,access\r\n',
      'sys_1,"Ledger\nwith a second line",FINANCE,ACTIVE,\r\n\r\n,,,,\r\nsys_2,Wiki,OTHER,ACTIVE,"[{""person_id"": ""per_1"", ""level"": ""ADMIN"", ""granted_at"": ""2025-03-01T09:00:00Z""}]"\r\n',
    );
    assert.equal(out.length, 5);
    assert.deepEqual([out[0], out[2], out[3]], ['', '', '']);
    assert.deepEqual(JSON.parse(out[1] as string), {
      register: 'systems',
      op: 'upsert',
      record: { id: 'sys_1', name: 'Ledger\nwith a second line', category: 'FINANCE', status: 'ACTIVE' },
    });
    assert.deepEqual(JSON.parse(out[4] as string).record.access, [
      { person_id: 'per_1', level: 'ADMIN', granted_at: '2025-03-01T09:00:00Z' },
    ]);
  });

  it('cells take the declared kind: whole numbers, TRUE/false, empty as absent; what does not convert stays text for the validator', async () => {
    const [, row] = await lines(
      vendors,
      '\uFEFFid,annual_cost_minor,auto_renews,seats_purchased,name,notice_period_days\nven_1,120000,TRUE,,007,1.5\n',
    );
    assert.deepEqual(JSON.parse(row as string).record, {
      id: 'ven_1',
      annual_cost_minor: 120000,
      auto_renews: true,
      name: '007',
      notice_period_days: '1.5',
    });
  });

  it('an unclosed quote is reported at the row (and line) where it opened, not at the end of the file', async () => {
    const text = 'id,name\nven_1,"two\nlines"\n\nven_2,"Paperclip\nven_3,Staples\nven_4,Dunder\nven_5,Vance\n';
    // Rows: 1 header, 2 ven_1 (lines 2-3), 3 blank (line 4), 4 ven_2 opens the quote at line 5; the file ends at line 8.
    const message = await refusal(vendors, text);
    assert.match(message, /^CSV row 4 \(from line 5 of the file\) opens a quoted cell that is never closed: close the quote/);
    // Whatever the chunks the file arrives in.
    const err = await lines(vendors, ...text.match(/[\s\S]{1,7}/g)!).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.match((err as Error).message, /^CSV row 4 \(from line 5 of the file\)/);
  });

  it('a chunk boundary inside a multi-byte character is read whole', async () => {
    const bytes = Buffer.from('id,name\nven_1,Müller\n');
    const cut = bytes.indexOf(0xc3) + 1;
    const [, row] = await lines(vendors, bytes.subarray(0, cut), bytes.subarray(cut));
    assert.equal(JSON.parse(row as string).record.name, 'Müller');
  });

  it('refuses, with a reason and the row, what is wrong with the file rather than with a record', async () => {
    assert.match(await refusal(vendors, 'id,nmae\nven_1,x\n'), /^CSV column "nmae" is not a field of vendors; fields are: id, name,/);
    assert.match(await refusal(vendors, 'id,name,name\n'), /^CSV column "name" is named twice/);
    assert.match(await refusal(vendors, 'name\nx\n'), /no id column/);
    assert.match(await refusal(vendors, 'id,name\nven_1,a\nven_2\n'), /^CSV row 3 has 1 cells but the header has 2/);
    assert.match(
      await refusal(vendors, 'id,name\nven_1,"open\n'),
      /^CSV row 2 \(from line 2 of the file\) opens a quoted cell that is never closed/,
    );
    assert.match(await refusal(vendors, Buffer.from('id,name\nven_1,M\xfcller\n', 'latin1')), /not UTF-8 text; save it as "CSV UTF-8"/);
  });
});
