'use strict';
// The three types: parsing, text round trips byte for byte, similarity and
// Hamming distance as the server computes them, NULLs and bad input.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const ndd = require('..');
const { MinHash, MinHashBbit, parseSimhash, formatSimhash, hammingDistance, toSql, registerTypes } = ndd;
const { connect, disconnect, documents, loadDocuments } = require('./support');

let client;
let info;
const docs = documents({ seed: 7, families: 10, variants: 3 });

// sketch settings to cover: num_perm, unit, shingle size and seed
const SETTINGS = [
  "num_perm => 16, shingle_size => 1",
  "num_perm => 64, shingle_size => 3, unit => 'char', seed => -7",
  "num_perm => 128, shingle_size => 2, seed => 42",
  "num_perm => 1000, shingle_size => 5, seed => 2147483647",
];

before(async () => {
  client = await connect('types');
  info = await registerTypes(client);
  await loadDocuments(client, 'docs', docs.concat([
    { id: 1001, body: '' },              // empty
    { id: 1002, body: 'one' },           // short: most positions filled
    { id: 1003, body: 'two words here' },
    { id: 1004, body: null },
  ]));
});

after(async () => {
  await disconnect(client);
});

test('registerTypes finds the OIDs of the three types in this database', async () => {
  const { rows } = await client.query(
    `SELECT 'minhash'::regtype::oid::int4 AS minhash, 'minhash_bbit'::regtype::oid::int4 AS minhash_bbit,
            'simhash'::regtype::oid::int4 AS simhash`);
  assert.deepEqual(info.oids, rows[0]);
});

test('registerTypes can fill a types object instead of the client', async () => {
  const calls = [];
  const types = { setTypeParser: (oid, format, fn) => calls.push([oid, format, typeof fn]) };
  const got = await registerTypes(client, types);
  assert.equal(calls.length, 6); // three types and their arrays
  assert.ok(calls.some(([oid]) => oid === got.oids.minhash));
  assert.ok(calls.every(([, format, fn]) => format === 'text' && fn === 'function'));
});

// sketches of every document under every setting, with their text forms
async function minhashRows() {
  const parts = SETTINGS.map((s, i) =>
    `SELECT ${i} AS setting, id, minhash_sketch(body, ${s}) AS s, minhash_sketch(body, ${s})::text AS t FROM docs`);
  parts.push(`SELECT 10, id, minhash_sketch(string_to_array(body, ' '), num_perm => 32, seed => 5),
                     minhash_sketch(string_to_array(body, ' '), num_perm => 32, seed => 5)::text FROM docs`);
  parts.push(`SELECT 11, id, minhash_sketch(ARRAY[id, id * 7, 3]::bigint[], num_perm => 48),
                     minhash_sketch(ARRAY[id, id * 7, 3]::bigint[], num_perm => 48)::text FROM docs`);
  const { rows } = await client.query(parts.join(' UNION ALL ') + ' ORDER BY 1, 2');
  return rows;
}

test('minhash: server text -> JS -> server parameter, byte for byte', async () => {
  const rows = (await minhashRows()).filter((r) => r.t !== null);
  assert.ok(rows.length > 200);
  let filled = 0;
  let empty = 0;
  for (const r of rows) {
    assert.ok(r.s instanceof MinHash);
    assert.ok(Object.isFrozen(r.s) && Object.isFrozen(r.s.values) && Object.isFrozen(r.s.filled));
    assert.equal(r.s.toString(), r.t);
    assert.equal(r.s.toPostgres(), r.t);
    assert.equal(MinHash.parse(r.t).toString(), r.t);
    if (r.s.filled.length > 0) filled++;
    if (r.s.empty) empty++;
  }
  assert.ok(filled > 0, 'some sketches have filled positions');
  assert.ok(empty > 0, 'some sketches are empty');
  // all of them back as one array parameter, and a few as scalars
  const back = await client.query(
    'SELECT u::text AS t FROM unnest($1::minhash[]) WITH ORDINALITY AS x(u, n) ORDER BY n', [rows.map((r) => r.s)]);
  assert.deepEqual(back.rows.map((r) => r.t), rows.map((r) => r.t));
  for (const r of rows.filter((_, i) => i % 25 === 0)) {
    const one = await client.query('SELECT $1::minhash::text AS t, $1::minhash AS s', [r.s]);
    assert.equal(one.rows[0].t, r.t);
    assert.deepEqual(one.rows[0].s, r.s);
  }
});

test('minhash: settings match minhash_settings()', async () => {
  const { rows } = await client.query(
    `SELECT s, (minhash_settings(s)).* FROM (SELECT minhash_sketch(body, num_perm => 64, shingle_size => 3, unit => 'char', seed => -7) s FROM docs WHERE body IS NOT NULL) x`);
  for (const r of rows) {
    assert.deepEqual([r.s.numPerm, r.s.unit, r.s.shingleSize, r.s.seed], [r.num_perm, r.unit, r.shingle_size, r.seed]);
  }
});

test('minhash: JS similarity equals the server similarity() for every pair', async () => {
  const { rows: sk } = await client.query(
    `SELECT id, minhash_sketch(body, shingle_size => 2) AS s FROM docs WHERE body IS NOT NULL ORDER BY id`);
  const { rows } = await client.query(
    `SELECT a.id AS a, b.id AS b, similarity(a.s, b.s) AS sim, a.s <-> b.s AS dist
     FROM (SELECT id, minhash_sketch(body, shingle_size => 2) s FROM docs WHERE body IS NOT NULL) a,
          (SELECT id, minhash_sketch(body, shingle_size => 2) s FROM docs WHERE body IS NOT NULL) b
     WHERE a.id <= b.id`);
  const byId = new Map(sk.map((r) => [String(r.id), r.s]));
  assert.ok(rows.length > 800);
  let between = 0;
  for (const r of rows) {
    const x = byId.get(String(r.a));
    const y = byId.get(String(r.b));
    assert.equal(x.similarity(y), r.sim, `pair ${r.a}, ${r.b}`);
    assert.equal(y.similarity(x), r.sim);
    assert.equal(x.distance(y), r.dist);
    if (r.sim > 0 && r.sim < 1) between++;
  }
  assert.ok(between > 50, 'the pairs cover similarities between 0 and 1');
});

test('minhash: sketches made differently are not compared, here as on the server', async () => {
  const { rows } = await client.query(
    `SELECT minhash_sketch('a b c d'::text, num_perm => 16) a, minhash_sketch('a b c d'::text, num_perm => 16, seed => 1) b,
            minhash_sketch('a b c d'::text, num_perm => 32) c`);
  const { a, b, c } = rows[0];
  assert.throws(() => a.similarity(b), /different settings/);
  assert.throws(() => a.similarity(c), /different settings/);
  assert.throws(() => a.similarity('x'), TypeError);
  await assert.rejects(client.query('SELECT similarity($1::minhash, $2::minhash)', [a, b]), (e) => e.code === '22023');
});

test('minhash_bbit: round trip and similarity for b = 1, 2, 4 and 8', async () => {
  for (const bits of [1, 2, 4, 8]) {
    const { rows } = await client.query(
      `SELECT id, minhash_bbit(minhash_sketch(body, num_perm => 100, shingle_size => 2), $1) AS s,
              minhash_bbit(minhash_sketch(body, num_perm => 100, shingle_size => 2), $1)::text AS t
       FROM docs WHERE body IS NOT NULL ORDER BY id`, [bits]);
    for (const r of rows) {
      assert.ok(r.s instanceof MinHashBbit && Object.isFrozen(r.s));
      assert.equal(r.s.bits, bits);
      assert.equal(r.s.toString(), r.t);
    }
    assert.ok(rows.some((r) => r.s.empty));
    const back = await client.query(
      'SELECT u::text AS t FROM unnest($1::minhash_bbit[]) WITH ORDINALITY AS x(u, n) ORDER BY n', [rows.map((r) => r.s)]);
    assert.deepEqual(back.rows.map((r) => r.t), rows.map((r) => r.t));
    const sims = await client.query(
      `SELECT a.n AS a, b.n AS b, similarity(a.u, b.u) AS sim
       FROM unnest($1::minhash_bbit[]) WITH ORDINALITY a(u, n), unnest($1::minhash_bbit[]) WITH ORDINALITY b(u, n)
       WHERE a.n <= b.n`, [rows.map((r) => r.s)]);
    for (const r of sims.rows) {
      assert.equal(rows[r.a - 1].s.similarity(rows[r.b - 1].s), r.sim, `b=${bits}, pair ${r.a}, ${r.b}`);
    }
    assert.ok(sims.rows.some((r) => r.sim > 0 && r.sim < 1));
  }
});

test('minhash_bbit: values made with different b are not compared', async () => {
  const { rows } = await client.query(
    `SELECT minhash_bbit(minhash_sketch('a b c d'::text, num_perm => 16), 2) a,
            minhash_bbit(minhash_sketch('a b c d'::text, num_perm => 16), 4) b`);
  assert.throws(() => rows[0].a.similarity(rows[0].b), /different settings/);
});

test('simhash: a BigInt, and back byte for byte', async () => {
  const { rows } = await client.query(
    `SELECT s, s::text AS t, s::bigint::text AS signed FROM (
       SELECT simhash(body) s FROM docs WHERE body IS NOT NULL
       UNION ALL SELECT simhash(body, shingle_size => 1, seed => 9) FROM docs WHERE body IS NOT NULL
       UNION ALL SELECT v::simhash FROM unnest(ARRAY['0000000000000000', 'ffffffffffffffff', '8000000000000000',
                                                      '7fffffffffffffff', '0000000000000001']) v) x`);
  for (const r of rows) {
    assert.equal(typeof r.s, 'bigint');
    assert.ok(r.s >= 0n && r.s < 1n << 64n);
    assert.equal(formatSimhash(r.s), r.t);
    assert.equal(BigInt.asIntN(64, r.s), BigInt(r.signed));
    assert.equal(parseSimhash(r.t), r.s);
    // the signed form (as simhash::bigint gives it) serializes the same
    assert.equal(formatSimhash(BigInt(r.signed)), r.t);
  }
  const back = await client.query(
    'SELECT u::text AS t FROM unnest($1::simhash[]) WITH ORDINALITY AS x(u, n) ORDER BY n', [toSql(rows.map((r) => r.s))]);
  assert.deepEqual(back.rows.map((r) => r.t), rows.map((r) => r.t));
  for (const r of rows.slice(0, 10)) {
    const one = await client.query('SELECT $1::simhash::text AS t, $1::simhash AS s', [toSql(r.s)]);
    assert.equal(one.rows[0].t, r.t);
    assert.equal(one.rows[0].s, r.s);
  }
});

test('simhash: hammingDistance equals the server hamming_distance() for every pair', async () => {
  const { rows } = await client.query(
    `SELECT a.s AS a, b.s AS b, hamming_distance(a.s, b.s) AS d, a.s <-> b.s AS dd
     FROM (SELECT simhash(body) s FROM docs WHERE body IS NOT NULL) a, (SELECT simhash(body) s FROM docs WHERE body IS NOT NULL) b`);
  assert.ok(rows.length > 1000);
  for (const r of rows) {
    assert.equal(hammingDistance(r.a, r.b), r.d);
    assert.equal(r.dd, r.d);
  }
  assert.equal(hammingDistance(0n, (1n << 64n) - 1n), 64);
  assert.equal(hammingDistance(-1n, 0n), 64);
});

test('NULLs: NULL values read as null, null parameters are NULL', async () => {
  const { rows } = await client.query(
    `SELECT NULL::minhash a, NULL::minhash_bbit b, NULL::simhash c,
            ARRAY[minhash_sketch('x y'::text), NULL] d, $1::minhash IS NULL e, $2::simhash IS NULL f, $3::minhash_bbit IS NULL g`,
    [null, toSql(null), undefined]);
  const r = rows[0];
  assert.equal(r.a, null);
  assert.equal(r.b, null);
  assert.equal(r.c, null);
  assert.ok(r.d[0] instanceof MinHash);
  assert.equal(r.d[1], null);
  assert.deepEqual([r.e, r.f, r.g], [true, true, true]);
  // sketches of a NULL text are NULL (the functions are STRICT)
  const n = await client.query(`SELECT minhash_sketch(body) a, simhash(body) b FROM docs WHERE body IS NULL`);
  assert.deepEqual(n.rows, [{ a: null, b: null }]);
});

test('arrays of sketches, one and two dimensional', async () => {
  const { rows } = await client.query(
    `SELECT ARRAY[[simhash('a b c'::text), NULL], [NULL, '00000000000000ff'::simhash]] s,
            ARRAY[]::minhash[] e, ARRAY[minhash_bbit(minhash_sketch('p q r'::text, num_perm => 16), 1)] b`);
  assert.deepEqual(rows[0].s.map((a) => a.map((x) => typeof x)), [['bigint', 'object'], ['object', 'bigint']]);
  assert.equal(rows[0].s[1][1], 255n);
  assert.deepEqual(rows[0].e, []);
  assert.ok(rows[0].b[0] instanceof MinHashBbit);
});

test('parsers reject what the server would not write', async () => {
  const good = (await client.query(`SELECT minhash_sketch('a b c d e f'::text, num_perm => 16)::text t`)).rows[0].t;
  const bad = [
    good.replace('v1,', 'v2,'),
    good.replace('num_perm=16', 'num_perm=8'),
    good.replace('unit=word', 'unit=line'),
    good.slice(0, -1),
    good + '0',
    good.replace(/:[0-9a-f]{8}/, ':0000000g'),
    good.replace('seed=0', 'seed=2147483648'),
    '',
  ];
  for (const b of bad) {
    assert.throws(() => MinHash.parse(b), SyntaxError, b);
    await assert.rejects(client.query('SELECT $1::text::minhash', [b]), (e) => e.code === '22P02', b);
  }
  for (const b of ['v1,num_perm=16,unit=word,shingle_size=5,seed=0,b=3:0000000000000000',
    'v1,num_perm=16,unit=word,shingle_size=5,seed=0,b=1:0000000000000002',
    'v1,num_perm=16,unit=text,shingle_size=2,seed=0,b=1:0000000000000000']) {
    assert.throws(() => MinHashBbit.parse(b), SyntaxError, b);
    await assert.rejects(client.query('SELECT $1::text::minhash_bbit', [b]), (e) => e.code === '22P02', b);
  }
  for (const b of ['123', '0123456789abcdeg', '0123456789abcdef0']) {
    assert.throws(() => parseSimhash(b), SyntaxError, b);
    await assert.rejects(client.query('SELECT $1::text::simhash', [b]), (e) => e.code === '22P02', b);
  }
  assert.throws(() => formatSimhash(1n << 64n), RangeError);
  assert.throws(() => formatSimhash(5), TypeError);
  assert.throws(() => toSql({}), TypeError);
});

test('the ESM entry exports the same objects', async () => {
  const esm = await import('../index.mjs');
  assert.equal(esm.MinHash, MinHash);
  assert.equal(esm.default, ndd);
  assert.deepEqual(Object.keys(ndd).sort(), Object.keys(esm).filter((k) => k !== 'default').sort());
});
