/** The media types of wsops' answers and uploads, declared once for every route that names them. */

/** Every JSON answer: the API's documents, problem details, the console's JSON endpoints. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Bulk import and export on the internal listener: one JSON operation a line. */
export const NDJSON_TYPE = 'application/x-ndjson';
