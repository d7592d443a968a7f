'use strict';
// ndd-pg: node-postgres support for the ndd extension.
//
// Values: minhash and minhash_bbit become frozen MinHash / MinHashBbit
// objects that compute similarity() as the server does and print the
// server's text form; simhash becomes an unsigned 64-bit BigInt.  Helpers:
// lookup (similar()), topK (near_duplicate_top_k), pairs
// (near_duplicate_pairs) and clusters (near_duplicate_clusters), with every
// user identifier quoted or passed as a parameter.

const NUM_PERM_MIN = 16;
const NUM_PERM_MAX = 1024;
const SHINGLE_SIZE_MIN = 1;
const SHINGLE_SIZE_MAX = 32;
// the units the server's text form names (sources 1-8); the weighted ones
// are weighted minhash sketches (weighted_minhash_sketch()), ordinary minhash
// values otherwise
const UNITS = ['word', 'char', 'text', 'bigint',
  'weighted_word', 'weighted_char', 'weighted_text', 'weighted_bigint'];
// units of sketches of arrays: their shingle_size is 1
const ARRAY_UNITS = ['text', 'bigint', 'weighted_text', 'weighted_bigint'];
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const UINT64_MASK = (1n << 64n) - 1n;

// ---------------------------------------------------------------------------
// Shared parsing of the "v1,num_perm=K,unit=U,shingle_size=S,seed=N" header
// ---------------------------------------------------------------------------

function syntaxError(type, input, detail) {
  const err = new SyntaxError(`invalid input syntax for type ${type}: "${input}": ${detail}`);
  return err;
}

function checkSettings(type, input, s) {
  if (s.version !== 1) throw syntaxError(type, input, `unsupported format version ${s.version}`);
  if (!Number.isInteger(s.numPerm) || s.numPerm < NUM_PERM_MIN || s.numPerm > NUM_PERM_MAX) {
    throw syntaxError(type, input, `num_perm must be between ${NUM_PERM_MIN} and ${NUM_PERM_MAX}`);
  }
  if (!UNITS.includes(s.unit)) {
    throw syntaxError(type, input,
      'unit must be word, char, text, bigint, weighted_word, weighted_char, weighted_text or weighted_bigint');
  }
  const array = ARRAY_UNITS.includes(s.unit);
  if (!Number.isInteger(s.shingleSize) ||
      (array ? s.shingleSize !== 1 : s.shingleSize < SHINGLE_SIZE_MIN || s.shingleSize > SHINGLE_SIZE_MAX)) {
    throw syntaxError(type, input, `shingle_size must be between ${SHINGLE_SIZE_MIN} and ${SHINGLE_SIZE_MAX}, and 1 for arrays`);
  }
  if (!Number.isInteger(s.seed) || s.seed < INT32_MIN || s.seed > INT32_MAX) {
    throw syntaxError(type, input, 'seed must be a 32-bit integer');
  }
}

const HEADER = /^v(\d{1,3}),num_perm=(\d{1,10}),unit=([a-z_]+),shingle_size=(\d{1,10}),seed=(-?\d{1,10})/;

function parseHeader(type, input) {
  const m = HEADER.exec(input);
  if (!m) throw syntaxError(type, input, 'expected "v1,num_perm=K,unit=U,shingle_size=S,seed=N"');
  const s = {
    version: Number(m[1]),
    numPerm: Number(m[2]),
    unit: m[3],
    shingleSize: Number(m[4]),
    seed: Number(m[5]),
    rest: input.slice(m[0].length),
  };
  checkSettings(type, input, s);
  return s;
}

function settingsString(x) {
  return `num_perm=${x.numPerm}, unit=${x.unit}, shingle_size=${x.shingleSize}, seed=${x.seed}`;
}

function headerString(x) {
  return `v${x.version},num_perm=${x.numPerm},unit=${x.unit},shingle_size=${x.shingleSize},seed=${x.seed}`;
}

function hex8(n) {
  return n.toString(16).padStart(8, '0');
}

// n groups of 8 hex digits at the start of s, as uint32 numbers, or null
function hexWords(s, n) {
  if (s.length < n * 8 || !/^[0-9a-fA-F]*$/.test(s.slice(0, n * 8))) return null;
  const words = new Array(n);
  for (let i = 0; i < n; i++) words[i] = parseInt(s.slice(i * 8, i * 8 + 8), 16);
  return words;
}

// ---------------------------------------------------------------------------
// minhash
// ---------------------------------------------------------------------------

class MinHash {
  // Use MinHash.parse(text); the fields are checked as the server checks them.
  constructor({ version = 1, numPerm, unit, shingleSize, seed, empty = false, values = null, filled = [] }) {
    checkSettings('minhash', '(object)', { version, numPerm, unit, shingleSize, seed });
    this.version = version;
    this.numPerm = numPerm;
    this.unit = unit;
    this.shingleSize = shingleSize;
    this.seed = seed;
    this.empty = Boolean(empty);
    if (this.empty) {
      this.values = Object.freeze([]);
      this.filled = Object.freeze([]);
    } else {
      if (!values || values.length !== numPerm) throw new TypeError(`minhash needs ${numPerm} values`);
      const v = Array.from(values, (x) => {
        if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) throw new TypeError('minhash values are 32-bit unsigned integers');
        return x;
      });
      const f = Array.from(new Set(filled)).sort((a, b) => a - b);
      for (const i of f) {
        if (!Number.isInteger(i) || i < 0 || i >= numPerm) throw new RangeError('filled positions must lie within num_perm');
      }
      if (f.length === numPerm) throw new RangeError('the filled positions leave no real position');
      this.values = Object.freeze(v);
      this.filled = Object.freeze(f);
    }
    Object.freeze(this);
  }

  // The sketch of the server's text form.
  static parse(text) {
    if (typeof text !== 'string') throw new TypeError('MinHash.parse takes a string');
    const h = parseHeader('minhash', text);
    let rest = h.rest;
    if (rest[0] !== ':') throw syntaxError('minhash', text, 'expected ":" after the seed');
    rest = rest.slice(1);
    if (rest === 'empty') return new MinHash({ ...h, empty: true });
    const values = hexWords(rest, h.numPerm);
    if (!values) throw syntaxError('minhash', text, `the values must be ${h.numPerm} groups of 8 hexadecimal digits`);
    rest = rest.slice(h.numPerm * 8);
    const filled = [];
    if (rest.length > 0) {
      const nwords = Math.ceil(h.numPerm / 32);
      if (rest[0] !== ':' || rest.length !== 1 + nwords * 8) {
        throw syntaxError('minhash', text, `expected ":" and a bitmap of ${nwords} groups of 8 hexadecimal digits`);
      }
      const words = hexWords(rest.slice(1), nwords);
      if (!words) throw syntaxError('minhash', text, 'the filled bitmap must be hexadecimal');
      for (let i = 0; i < nwords * 32; i++) {
        if ((words[i >>> 5] >>> (i & 31)) & 1) {
          if (i >= h.numPerm) throw syntaxError('minhash', text, 'the filled bitmap has bits beyond num_perm');
          filled.push(i);
        }
      }
      if (filled.length === h.numPerm) throw syntaxError('minhash', text, 'the filled bitmap leaves no real position');
    }
    return new MinHash({ ...h, values, filled });
  }

  // The estimated Jaccard resemblance, exactly as the server's similarity().
  similarity(other) {
    if (!(other instanceof MinHash)) throw new TypeError('similarity() compares a MinHash with a MinHash');
    if (this.numPerm !== other.numPerm || this.unit !== other.unit || this.shingleSize !== other.shingleSize ||
        this.seed !== other.seed || this.version !== other.version) {
      throw new RangeError('cannot compare minhash sketches made with different settings: ' +
        `one was made with ${settingsString(this)}, the other with ${settingsString(other)}`);
    }
    if (this.empty || other.empty) return 0;
    let same = 0;
    for (let i = 0; i < this.numPerm; i++) if (this.values[i] === other.values[i]) same++;
    return same / this.numPerm;
  }

  // 1 - similarity, the server's <->
  distance(other) {
    return 1 - this.similarity(other);
  }

  // The server's text form, byte for byte.
  toString() {
    let s = headerString(this) + ':';
    if (this.empty) return s + 'empty';
    s += this.values.map(hex8).join('');
    if (this.filled.length > 0) {
      const words = new Array(Math.ceil(this.numPerm / 32)).fill(0);
      for (const i of this.filled) words[i >>> 5] = (words[i >>> 5] | (1 << (i & 31))) >>> 0;
      s += ':' + words.map(hex8).join('');
    }
    return s;
  }

  // node-postgres calls this for a query parameter.
  toPostgres() {
    return this.toString();
  }

  toJSON() {
    return this.toString();
  }
}

// ---------------------------------------------------------------------------
// minhash_bbit
// ---------------------------------------------------------------------------

const BBIT = /^,b=(\d{1,10}):/;

class MinHashBbit {
  // Use MinHashBbit.parse(text); the fields are checked as the server checks them.
  constructor({ version = 1, numPerm, unit, shingleSize, seed, bits, empty = false, values = null }) {
    checkSettings('minhash_bbit', '(object)', { version, numPerm, unit, shingleSize, seed });
    if (![1, 2, 4, 8].includes(bits)) throw new RangeError('b must be 1, 2, 4 or 8');
    this.version = version;
    this.numPerm = numPerm;
    this.unit = unit;
    this.shingleSize = shingleSize;
    this.seed = seed;
    this.bits = bits;
    this.empty = Boolean(empty);
    if (this.empty) {
      this.values = Object.freeze([]);
    } else {
      if (!values || values.length !== numPerm) throw new TypeError(`minhash_bbit needs ${numPerm} values`);
      this.values = Object.freeze(Array.from(values, (x) => {
        if (!Number.isInteger(x) || x < 0 || x >= 1 << bits) throw new RangeError(`minhash_bbit values fit in ${bits} bits`);
        return x;
      }));
    }
    Object.freeze(this);
  }

  // The value of the server's text form.
  static parse(text) {
    if (typeof text !== 'string') throw new TypeError('MinHashBbit.parse takes a string');
    const h = parseHeader('minhash_bbit', text);
    const m = BBIT.exec(h.rest);
    if (!m) throw syntaxError('minhash_bbit', text, 'expected ",b=B:" after the seed');
    const bits = Number(m[1]);
    if (![1, 2, 4, 8].includes(bits)) throw syntaxError('minhash_bbit', text, 'b must be 1, 2, 4 or 8');
    const rest = h.rest.slice(m[0].length);
    if (rest === 'empty') return new MinHashBbit({ ...h, bits, empty: true });
    const digits = bits > 4 ? 2 : 1;
    if (rest.length !== h.numPerm * digits || !/^[0-9a-fA-F]*$/.test(rest)) {
      throw syntaxError('minhash_bbit', text, `the values must be ${h.numPerm * digits} hexadecimal digits, ${digits} per position`);
    }
    const values = new Array(h.numPerm);
    for (let i = 0; i < h.numPerm; i++) {
      const v = parseInt(rest.slice(i * digits, (i + 1) * digits), 16);
      if (v >= 1 << bits) throw syntaxError('minhash_bbit', text, `position ${i} does not fit in ${bits} bits`);
      values[i] = v;
    }
    return new MinHashBbit({ ...h, bits, values });
  }

  // Li and König's estimate, (P - 1/2^b) / (1 - 1/2^b) clipped to [0, 1],
  // computed in the server's order of operations: the same double.
  similarity(other) {
    if (!(other instanceof MinHashBbit)) throw new TypeError('similarity() compares a MinHashBbit with a MinHashBbit');
    if (this.numPerm !== other.numPerm || this.bits !== other.bits || this.unit !== other.unit ||
        this.shingleSize !== other.shingleSize || this.seed !== other.seed || this.version !== other.version) {
      throw new RangeError('cannot compare minhash_bbit sketches made with different settings: ' +
        `one was made with ${settingsString(this)}, b=${this.bits}, the other with ${settingsString(other)}, b=${other.bits}`);
    }
    if (this.empty || other.empty) return 0;
    const k = this.numPerm;
    let differing = 0;
    for (let i = 0; i < k; i++) if (this.values[i] !== other.values[i]) differing++;
    const chance = 1 / (1 << this.bits);
    const p = (k - differing) / k;
    const r = (p - chance) / (1 - chance);
    return Math.max(0, Math.min(1, r));
  }

  // The server's text form, byte for byte.
  toString() {
    const s = `${headerString(this)},b=${this.bits}:`;
    if (this.empty) return s + 'empty';
    const digits = this.bits > 4 ? 2 : 1;
    return s + this.values.map((v) => v.toString(16).padStart(digits, '0')).join('');
  }

  toPostgres() {
    return this.toString();
  }

  toJSON() {
    return this.toString();
  }
}

// ---------------------------------------------------------------------------
// simhash: an unsigned 64-bit BigInt
// ---------------------------------------------------------------------------

// The BigInt (0 to 2^64 - 1) of the server's text form: 16 hex digits,
// blanks around them allowed, as simhash_in allows.
function parseSimhash(text) {
  if (typeof text !== 'string') throw new TypeError('parseSimhash takes a string');
  const t = text.trim();
  if (!/^[0-9a-fA-F]{16}$/.test(t)) throw syntaxError('simhash', text, 'a simhash is 16 hexadecimal digits');
  return BigInt('0x' + t);
}

// The server's text form of a fingerprint: 16 lower-case hex digits.  A
// negative BigInt is taken as the two's complement (the simhash::bigint cast).
function formatSimhash(value) {
  if (typeof value !== 'bigint') throw new TypeError('a simhash is a BigInt');
  if (value < -(1n << 63n) || value > UINT64_MASK) throw new RangeError('a simhash is 64 bits');
  return BigInt.asUintN(64, value).toString(16).padStart(16, '0');
}

// Bits in which two fingerprints differ: the server's hamming_distance().
function hammingDistance(a, b) {
  let x = BigInt.asUintN(64, BigInt.asUintN(64, a) ^ BigInt.asUintN(64, b));
  let n = 0;
  while (x) {
    x &= x - 1n;
    n++;
  }
  return n;
}

// A value as a query parameter: MinHash and MinHashBbit as their text form,
// a BigInt as a simhash, arrays element by element; null and undefined as NULL.
function toSql(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return formatSimhash(value);
  if (value instanceof MinHash || value instanceof MinHashBbit) return value.toString();
  if (Array.isArray(value)) return value.map(toSql);
  throw new TypeError('toSql takes a MinHash, a MinHashBbit, a BigInt simhash, an array of them, or null');
}

// ---------------------------------------------------------------------------
// Arrays (minhash[] and so on) in the text form PostgreSQL writes
// ---------------------------------------------------------------------------

function parseArray(text, parse) {
  let i = 0;
  // an optional dimension decoration, "[1:2]={...}"
  if (text[0] === '[') {
    i = text.indexOf('=') + 1;
    if (i === 0) throw new SyntaxError(`malformed array: "${text}"`);
  }
  function level() {
    if (text[i] !== '{') throw new SyntaxError(`malformed array: "${text}"`);
    i++;
    const out = [];
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      if (text[i] === '{') {
        out.push(level());
      } else if (text[i] === '"') {
        let s = '';
        i++;
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\') i++;
          s += text[i++];
        }
        if (text[i] !== '"') throw new SyntaxError(`malformed array: "${text}"`);
        i++;
        out.push(parse(s));
      } else {
        let j = i;
        while (j < text.length && text[j] !== ',' && text[j] !== '}') j++;
        const s = text.slice(i, j);
        i = j;
        out.push(s === 'NULL' ? null : parse(s));
      }
      if (text[i] === ',') {
        i++;
      } else if (text[i] === '}') {
        i++;
        return out;
      } else {
        throw new SyntaxError(`malformed array: "${text}"`);
      }
    }
  }
  const result = level();
  if (i !== text.length) throw new SyntaxError(`malformed array: "${text}"`);
  return result;
}

// ---------------------------------------------------------------------------
// Registering the types on a connection
// ---------------------------------------------------------------------------

const schemaCache = new WeakMap();

const TYPE_QUERY = `SELECT n.nspname AS schema, t.typname AS name, t.oid::int4 AS oid, t.typarray::int4 AS array_oid
FROM pg_catalog.pg_extension e
JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
JOIN pg_catalog.pg_type t ON t.typnamespace = e.extnamespace
WHERE e.extname = 'ndd' AND t.typname IN ('minhash', 'minhash_bbit', 'simhash')`;

const PARSERS = {
  minhash: MinHash.parse,
  minhash_bbit: MinHashBbit.parse,
  simhash: parseSimhash,
};

// Look up the OIDs of ndd's types in the connected database and install
// text parsers for them (and their arrays) on the client, or on `types`
// (a node-postgres types object such as pg.types) when given.  Resolves to
// { schema, oids: { minhash, minhash_bbit, simhash } }.
async function registerTypes(client, types) {
  const target = types || client;
  if (!target || typeof target.setTypeParser !== 'function') {
    throw new TypeError('registerTypes needs a pg Client (or a types object with setTypeParser)');
  }
  const { rows } = await client.query(TYPE_QUERY);
  if (rows.length === 0) throw new Error('the ndd extension is not installed in this database (CREATE EXTENSION ndd)');
  const oids = {};
  for (const row of rows) {
    const parse = PARSERS[row.name];
    oids[row.name] = row.oid;
    target.setTypeParser(row.oid, 'text', parse);
    if (row.array_oid) target.setTypeParser(row.array_oid, 'text', (text) => parseArray(text, parse));
  }
  schemaCache.set(client, rows[0].schema);
  return { schema: rows[0].schema, oids };
}

// ---------------------------------------------------------------------------
// Query helpers
// ---------------------------------------------------------------------------

// An identifier, quoted as PostgreSQL quotes it: nothing in it can end it.
function escapeIdentifier(name) {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('an identifier is a non-empty string');
  if (name.includes('\0')) throw new RangeError('an identifier cannot contain a NUL character');
  return '"' + name.replace(/"/g, '""') + '"';
}

// A table given as 'name' (one identifier, never split at dots) or
// { schema, name }: its quoted, qualified name.
function tableName(table) {
  if (typeof table === 'string') return escapeIdentifier(table);
  if (table && typeof table === 'object' && typeof table.name === 'string') {
    return (table.schema ? escapeIdentifier(table.schema) + '.' : '') + escapeIdentifier(table.name);
  }
  throw new TypeError('a table is a string or { schema, name }');
}

// The schema ndd is installed in, asked once per client or pool.
async function nddSchema(client) {
  let schema = schemaCache.get(client);
  if (schema === undefined) {
    const { rows } = await client.query(
      `SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
       JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'ndd'`);
    if (rows.length === 0) throw new Error('the ndd extension is not installed in this database (CREATE EXTENSION ndd)');
    schema = rows[0].schema;
    schemaCache.set(client, schema);
  }
  return escapeIdentifier(schema);
}

function checkOptions(opts, name) {
  if (!opts || typeof opts !== 'object') throw new TypeError(`${name} takes an options object`);
  for (const key of ['table', 'column', 'idColumn']) {
    if (opts[key] === undefined) throw new TypeError(`${name} needs ${key}`);
  }
}

// The rows whose sketch is similar to a query: for a MinHash,
// similarity >= threshold (similar(), which a minhash_ops index serves); for
// a BigInt simhash, hamming_distance <= maxDistance (a simhash_ops index);
// for a MinHashBbit, similarity >= threshold by a scan.  Rows of { id,
// similarity } (minhash) or { id, distance } (simhash), best first, ties by
// id; limit caps them.  A null query matches nothing.
async function lookup(client, opts) {
  checkOptions(opts, 'lookup');
  const { query, threshold, maxDistance, limit } = opts;
  const ndd = await nddSchema(client);
  const tbl = tableName(opts.table);
  const col = 't.' + escapeIdentifier(opts.column);
  const id = 't.' + escapeIdentifier(opts.idColumn);
  if (query === null || query === undefined) return [];
  if (limit !== undefined && limit !== null && !(Number.isInteger(limit) && limit >= 0)) {
    throw new RangeError('limit is a non-negative integer');
  }
  const lim = limit === undefined || limit === null ? '' : ' LIMIT $3';
  let sql;
  let params;
  if (query instanceof MinHash || query instanceof MinHashBbit) {
    const bbit = query instanceof MinHashBbit;
    const type = bbit ? 'minhash_bbit' : 'minhash';
    const t = threshold === undefined || threshold === null ? 0.8 : threshold;
    if (typeof t !== 'number' || !(t > 0 && t <= 1)) throw new RangeError('threshold must be in (0, 1]');
    const test = bbit ?
      `${ndd}.similarity(${col}, $1::${ndd}.${type}) OPERATOR(pg_catalog.>=) $2::pg_catalog.float8` :
      `${ndd}.similar(${col}, $1::${ndd}.${type}, $2::pg_catalog.float8)`;
    sql = `SELECT ${id}::pg_catalog.int8 AS id, ${ndd}.similarity(${col}, $1::${ndd}.${type}) AS similarity
FROM ${tbl} t WHERE ${test}
ORDER BY 2 DESC, 1${lim}`;
    params = [query.toString(), t];
  } else if (typeof query === 'bigint') {
    const d = maxDistance === undefined || maxDistance === null ? 3 : maxDistance;
    if (!Number.isInteger(d) || d < 0 || d > 64) throw new RangeError('maxDistance is an integer from 0 to 64');
    sql = `SELECT ${id}::pg_catalog.int8 AS id, ${ndd}.hamming_distance(${col}, $1::${ndd}.simhash) AS distance
FROM ${tbl} t WHERE ${ndd}.similar(${col}, $1::${ndd}.simhash, $2::pg_catalog.int4)
ORDER BY 2, 1${lim}`;
    params = [formatSimhash(query), d];
  } else {
    throw new TypeError('lookup takes a MinHash, a MinHashBbit or a BigInt simhash as its query');
  }
  if (lim) params.push(limit);
  const { rows } = await client.query(sql, params);
  return rows;
}

// near_duplicate_top_k: the k rows most similar to a MinHash, as
// [{ id, similarity }], best first, ties by id.
async function topK(client, opts) {
  checkOptions(opts, 'topK');
  const { query } = opts;
  const k = opts.k === undefined ? 10 : opts.k;
  if (!Number.isInteger(k) || k < 1) throw new RangeError('k is a positive integer');
  const ndd = await nddSchema(client);
  if (query === null || query === undefined) return [];
  if (!(query instanceof MinHash)) throw new TypeError('topK takes a MinHash as its query');
  const { rows } = await client.query(
    `SELECT id, similarity FROM ${ndd}.near_duplicate_top_k($1::pg_catalog.regclass, $2::pg_catalog.name,
       $3::pg_catalog.name, $4::${ndd}.minhash, $5::pg_catalog.int4)`,
    [tableName(opts.table), opts.column, opts.idColumn, query.toString(), k]);
  return rows;
}

// Optional arguments of pairs and clusters, checked and as parameters.
function discoveryArgs(opts) {
  const { threshold, maxDistance, verifyColumn } = opts;
  if (threshold !== undefined && threshold !== null && (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1))) {
    throw new RangeError('threshold must be in (0, 1]');
  }
  if (maxDistance !== undefined && maxDistance !== null && !Number.isInteger(maxDistance)) {
    throw new RangeError('maxDistance is an integer');
  }
  if (verifyColumn !== undefined && verifyColumn !== null && typeof verifyColumn !== 'string') {
    throw new TypeError('verifyColumn is a column name');
  }
  return [
    tableName(opts.table), opts.column, opts.idColumn,
    threshold === undefined ? null : threshold,
    verifyColumn === undefined ? null : verifyColumn,
    maxDistance === undefined ? null : maxDistance,
  ];
}

// near_duplicate_pairs: every pair of rows whose minhash sketches reach
// threshold (or whose simhash fingerprints are within maxDistance bits), as
// [{ idA, idB, similarity, distance }], ordered by idA, idB.
async function pairs(client, opts) {
  checkOptions(opts, 'pairs');
  const ndd = await nddSchema(client);
  const { rows } = await client.query(
    `SELECT id_a AS "idA", id_b AS "idB", similarity, distance
     FROM ${ndd}.near_duplicate_pairs($1::pg_catalog.regclass, $2::pg_catalog.name, $3::pg_catalog.name,
       threshold => $4::pg_catalog.float8, verify_column => $5::pg_catalog.name, max_distance => $6::pg_catalog.int4)
     ORDER BY 1, 2`,
    discoveryArgs(opts));
  return rows;
}

// near_duplicate_clusters: each row with a near-duplicate and its cluster's
// representative, as [{ id, clusterId }], ordered by id.  representativeOrder
// is an SQL ORDER BY list the server evaluates over the table, with the
// caller's rights (see ndd's README); it is passed as a value, never spliced.
async function clusters(client, opts) {
  checkOptions(opts, 'clusters');
  const ndd = await nddSchema(client);
  const order = opts.representativeOrder;
  if (order !== undefined && order !== null && typeof order !== 'string') {
    throw new TypeError('representativeOrder is a string');
  }
  const { rows } = await client.query(
    `SELECT id, cluster_id AS "clusterId"
     FROM ${ndd}.near_duplicate_clusters($1::pg_catalog.regclass, $2::pg_catalog.name, $3::pg_catalog.name,
       threshold => $4::pg_catalog.float8, verify_column => $5::pg_catalog.name, max_distance => $6::pg_catalog.int4,
       representative_order => $7::pg_catalog.text)
     ORDER BY 1`,
    [...discoveryArgs(opts), order === undefined ? null : order]);
  return rows;
}

module.exports = {
  MinHash,
  MinHashBbit,
  parseSimhash,
  formatSimhash,
  hammingDistance,
  toSql,
  registerTypes,
  escapeIdentifier,
  lookup,
  topK,
  pairs,
  clusters,
};
// require('ndd-pg').default, as the ESM default export and index.d.ts have it
Object.defineProperty(module.exports, 'default', { value: module.exports });
