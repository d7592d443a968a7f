'use strict';
// Weighted minhash (weighted_minhash_sketch()): ordinary minhash values whose
// unit is weighted_word, weighted_char (documents, each shingle weighing its
// count), weighted_text or weighted_bigint (arrays with float8 weights).
// Text round trips byte for byte, similarity() as the server computes it,
// and the units' checks.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { MinHash, MinHashBbit, registerTypes } = require('..');
const { connect, disconnect, documents, loadDocuments } = require('./support');

let client;
const docs = documents({ seed: 11, families: 12, variants: 3 });

// The arrays: a document's words (text[]) or the numbers in it (bigint[]),
// the first three repeated (a repeated element weighs the sum of its
// weights), each weighing a deterministic function of it and of its place.
function arraySketch(kind, numPerm, seed) {
  const elements = kind === 'text'
    ? `string_to_array(body, ' ')`
    : `ARRAY(SELECT m[1]::bigint FROM regexp_matches(body, '[0-9]+', 'g') WITH ORDINALITY r(m, i) ORDER BY i)`;
  const weight = kind === 'text'
    ? '0.25 + mod(length(e), 5) * 0.5 + mod(n, 3) * 1.5'
    : '0.5 + mod(e, 7) * 0.75 + mod(n, 4) / 3.0';
  const features = `(${elements}) || (${elements})[1:3]`;
  return `weighted_minhash_sketch(${features},
            ARRAY(SELECT (${weight})::float8 FROM unnest(${features}) WITH ORDINALITY u(e, n) ORDER BY n),
            num_perm => ${numPerm}, seed => ${seed})`;
}

function documentSketch(unit, numPerm, shingleSize, stripHtml, seed) {
  return `weighted_minhash_sketch(body, num_perm => ${numPerm}, shingle_size => ${shingleSize},
            unit => '${unit}', strip_html => ${stripHtml}, seed => ${seed})`;
}

// [unit, numPerm, shingleSize, seed, SQL]
const SETTINGS = [
  ['weighted_word', 128, 1, 0, documentSketch('word', 128, 1, false, 0)],
  ['weighted_word', 16, 2, -7, documentSketch('word', 16, 2, true, -7)],
  ['weighted_word', 200, 4, 99, documentSketch('word', 200, 4, false, 99)],
  ['weighted_char', 64, 3, 2147483647, documentSketch('char', 64, 3, false, 2147483647)],
  ['weighted_char', 17, 1, -2147483648, documentSketch('char', 17, 1, true, -2147483648)],
  ['weighted_char', 1024, 5, 3, documentSketch('char', 1024, 5, false, 3)],
  ['weighted_text', 100, 1, 123456, arraySketch('text', 100, 123456)],
  ['weighted_text', 16, 1, -1, arraySketch('text', 16, -1)],
  ['weighted_bigint', 48, 1, 5, arraySketch('bigint', 48, 5)],
  ['weighted_bigint', 333, 1, -2147483648, arraySketch('bigint', 333, -2147483648)],
];

before(async () => {
  client = await connect('weighted');
  await registerTypes(client);
  await loadDocuments(client, 'docs', docs.concat([
    { id: 1001, body: '' },                                                  // empty
    { id: 1002, body: '<p>w7 <b>w7</b> w12</p> w7 w7' },                     // html, repeats
    { id: 1003, body: 'x' },                                                 // no numbers
    { id: 1004, body: null },
  ]));
});

after(async () => {
  await disconnect(client);
});

test('weighted minhash: server text -> JS -> server parameter, byte for byte, every unit', async () => {
  const units = new Set();
  for (const [unit, numPerm, shingleSize, seed, sql] of SETTINGS) {
    const { rows } = await client.query(
      `SELECT id, ${sql} AS s, (${sql})::text AS t FROM docs WHERE body IS NOT NULL ORDER BY id`);
    assert.ok(rows.length > 40);
    let empty = 0;
    for (const r of rows) {
      assert.ok(r.s instanceof MinHash && Object.isFrozen(r.s));
      assert.deepEqual([r.s.unit, r.s.numPerm, r.s.shingleSize, r.s.seed], [unit, numPerm, shingleSize, seed]);
      assert.equal(r.s.toString(), r.t);
      assert.equal(r.s.toPostgres(), r.t);
      assert.equal(MinHash.parse(r.t).toString(), r.t);
      assert.deepEqual(MinHash.parse(r.t), r.s);
      if (r.s.empty) empty++;
    }
    assert.ok(empty > 0 && empty < rows.length - 30, `${unit} ${numPerm}: empty and non-empty sketches`);
    units.add(unit);
    // all of them back as one array parameter, with the server's settings
    const back = await client.query(
      `SELECT u::text AS t, (minhash_settings(u)).unit AS unit
       FROM unnest($1::minhash[]) WITH ORDINALITY AS x(u, n) ORDER BY n`, [rows.map((r) => r.s)]);
    assert.deepEqual(back.rows.map((r) => r.t), rows.map((r) => r.t));
    assert.ok(back.rows.every((r) => r.unit === unit));
    for (const r of rows.filter((_, i) => i % 20 === 0)) {
      const one = await client.query('SELECT $1::minhash::text AS t, $1::minhash AS s', [r.s]);
      assert.equal(one.rows[0].t, r.t);
      assert.deepEqual(one.rows[0].s, r.s);
    }
  }
  assert.deepEqual([...units].sort(), ['weighted_bigint', 'weighted_char', 'weighted_text', 'weighted_word']);
});

test('weighted minhash_bbit: round trip for b = 1, 2, 4 and 8', async () => {
  for (const bits of [1, 2, 4, 8]) {
    for (const [unit, , , , sql] of SETTINGS.filter((_, i) => i % 3 === bits % 3)) {
      const { rows } = await client.query(
        `SELECT minhash_bbit(${sql}, $1) AS s, minhash_bbit(${sql}, $1)::text AS t
         FROM docs WHERE body IS NOT NULL ORDER BY id`, [bits]);
      for (const r of rows) {
        assert.ok(r.s instanceof MinHashBbit);
        assert.equal(r.s.unit, unit);
        assert.equal(r.s.toString(), r.t);
      }
      const back = await client.query(
        'SELECT u::text AS t FROM unnest($1::minhash_bbit[]) WITH ORDINALITY AS x(u, n) ORDER BY n', [rows.map((r) => r.s)]);
      assert.deepEqual(back.rows.map((r) => r.t), rows.map((r) => r.t));
    }
  }
});

test('weighted minhash: JS similarity equals the server similarity() for every pair', async () => {
  for (const [unit, numPerm, , , sql] of SETTINGS) {
    const { rows } = await client.query(
      `WITH s AS (SELECT id, ${sql} AS s FROM docs WHERE body IS NOT NULL)
       SELECT a.s AS a, b.s AS b, similarity(a.s, b.s) AS sim, a.s <-> b.s AS dist,
              similarity(minhash_bbit(a.s, 2), minhash_bbit(b.s, 2)) AS bsim,
              minhash_bbit(a.s, 2) AS ba, minhash_bbit(b.s, 2) AS bb
       FROM s a, s b WHERE a.id <= b.id`);
    assert.ok(rows.length > 1000);
    let between = 0;
    for (const r of rows) {
      assert.equal(r.a.unit, unit);
      assert.equal(r.a.similarity(r.b), r.sim, `${unit} ${numPerm}`);
      assert.equal(r.b.similarity(r.a), r.sim);
      assert.equal(r.a.distance(r.b), r.dist);
      assert.equal(r.ba.similarity(r.bb), r.bsim);
      if (r.sim > 0 && r.sim < 1) between++;
    }
    assert.ok(between > 20, `${unit} ${numPerm}: similarities between 0 and 1`);
  }
});

test('weighted and unweighted sketches are not compared, here as on the server', async () => {
  const { rows } = await client.query(
    `SELECT weighted_minhash_sketch('a b c d'::text, num_perm => 16) a, minhash_sketch('a b c d'::text, num_perm => 16, shingle_size => 1) b`);
  const { a, b } = rows[0];
  assert.equal(a.unit, 'weighted_word');
  assert.equal(b.unit, 'word');
  assert.throws(() => a.similarity(b), /different settings/);
  await assert.rejects(client.query('SELECT similarity($1::minhash, $2::minhash)', [a, b]), (e) => e.code === '22023');
});

test('the weighted units are checked as the server checks them', async () => {
  const bad = [
    'v1,num_perm=16,unit=weighted_text,shingle_size=2,seed=0:empty',     // arrays: shingle_size 1
    'v1,num_perm=16,unit=weighted_bigint,shingle_size=32,seed=0:empty',
    'v1,num_perm=16,unit=weighted_word,shingle_size=33,seed=0:empty',
    'v1,num_perm=16,unit=weighted_line,shingle_size=1,seed=0:empty',      // unit
    'v1,num_perm=16,unit=weighted,shingle_size=1,seed=0:empty',
    'v1,num_perm=16,unit=_word,shingle_size=1,seed=0:empty',
  ];
  for (const b of bad) {
    assert.throws(() => MinHash.parse(b), SyntaxError, b);
    let serverError = null;
    await client.query('SELECT $1::text::minhash', [b]).catch((e) => { serverError = e; });
    assert.ok(serverError && serverError.code === '22P02', b);
    if (b.includes('unit=weighted_line')) {
      // the client's message carries the server's detail
      assert.match(serverError.detail, /^unit must be word, char, text, bigint, weighted_word, weighted_char, weighted_text or weighted_bigint\.$/);
      assert.throws(() => MinHash.parse(b), (e) => e.message.includes(serverError.detail.replace(/\.$/, '')));
    }
  }
  for (const b of ['v1,num_perm=16,unit=weighted_text,shingle_size=2,seed=0,b=1:0000000000000000',
    'v1,num_perm=16,unit=weighted_lines,shingle_size=1,seed=0,b=1:0000000000000000']) {
    assert.throws(() => MinHashBbit.parse(b), SyntaxError, b);
    await assert.rejects(client.query('SELECT $1::text::minhash_bbit', [b]), (e) => e.code === '22P02', b);
  }
  for (const g of ['v1,num_perm=16,unit=weighted_word,shingle_size=32,seed=0:empty',
    'v1,num_perm=16,unit=weighted_bigint,shingle_size=1,seed=0:empty',
    'v1,num_perm=16,unit=weighted_char,shingle_size=1,seed=0,b=8:empty']) {
    const Type = g.includes(',b=') ? MinHashBbit : MinHash;
    const type = g.includes(',b=') ? 'minhash_bbit' : 'minhash';
    const { rows } = await client.query(`SELECT $1::text::${type}::text AS t`, [g]);
    assert.equal(rows[0].t, g);
    assert.equal(Type.parse(g).toString(), g);
  }
  assert.throws(() => new MinHash({ numPerm: 16, unit: 'weighted_bigint', shingleSize: 2, seed: 0, empty: true }), SyntaxError);
  assert.equal(new MinHash({ numPerm: 16, unit: 'weighted_text', shingleSize: 1, seed: 0, empty: true }).toString(),
    'v1,num_perm=16,unit=weighted_text,shingle_size=1,seed=0:empty');
});
