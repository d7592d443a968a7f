'use strict';
// The query helpers give the answers of the plain SQL they stand for, with
// and without indexes, and no table or column name changes what they run.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const pg = require('pg');
const { registerTypes, lookup, topK, pairs, clusters, escapeIdentifier, MinHash } = require('..');
const { connect, disconnect, documents, loadDocuments } = require('./support');

let client;
// the tests quote names with pg's own escapeIdentifier, so that the one ndd-pg
// exports is checked, not used
const q = (name) => pg.escapeIdentifier(name);
const docs = documents({ seed: 11, families: 15, variants: 3 });
const HOSTILE_SCHEMA = 's"; DROP TABLE y; --';
const HOSTILE_TABLE = 'x"; DROP TABLE y; --';
const HOSTILE_SKETCH = 'mh"); DROP TABLE y; --';
const HOSTILE_FP = "fp' OR 1=1 --";
const HOSTILE_ID = 'Id "col"';

before(async () => {
  client = await connect('helpers');
  await registerTypes(client);
  await loadDocuments(client, 'docs', docs.concat([{ id: 1001, body: '' }, { id: 1002, body: null }]));
  await client.query(`ALTER TABLE docs ADD COLUMN mh minhash, ADD COLUMN mb minhash_bbit, ADD COLUMN fp simhash`);
  await client.query(`UPDATE docs SET mh = minhash_sketch(body, shingle_size => 2), fp = simhash(body, shingle_size => 1)`);
  await client.query(`UPDATE docs SET mb = minhash_bbit(mh, 4)`);
  // a row whose sketches are NULL though its text is not
  await client.query(`INSERT INTO docs VALUES (1003, 'no sketch here', NULL, NULL, NULL)`);
  // the same rows under hostile names, and the table an injection would drop
  await client.query('CREATE TABLE y (v int)');
  await client.query(`CREATE SCHEMA ${q(HOSTILE_SCHEMA)}`);
  for (const name of [q(HOSTILE_TABLE), `${q(HOSTILE_SCHEMA)}.${q(HOSTILE_TABLE)}`, '"a.b"']) {
    await client.query(`CREATE TABLE ${name} AS SELECT id AS ${q(HOSTILE_ID)}, body,
      mh AS ${q(HOSTILE_SKETCH)}, mb, fp AS ${q(HOSTILE_FP)} FROM docs`);
  }
});

after(async () => {
  try {
    if (client) await client.query(`DROP SCHEMA IF EXISTS ${q(HOSTILE_SCHEMA)} CASCADE`);
  } finally {
    await disconnect(client);
  }
});

async function rows(sql, params) {
  return (await client.query(sql, params)).rows;
}

async function queries() {
  // the first document of each family, a document of no family, an empty one
  const r = await rows(`SELECT mh, fp, mb FROM docs WHERE id % 4 = 1 AND id < 1000
    UNION ALL SELECT minhash_sketch(t, shingle_size => 2), simhash(t, shingle_size => 1), minhash_bbit(minhash_sketch(t, shingle_size => 2), 4)
    FROM (VALUES ('w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12'), ('')) v(t)`);
  return r;
}

async function scanLookup(q, threshold) {
  await client.query(`SET ndd.similarity_threshold = ${Number(threshold)}`);
  try {
    return await rows(`SELECT id::bigint AS id, similarity(mh, $1) AS similarity FROM docs WHERE mh % $1::minhash ORDER BY 2 DESC, 1`, [q]);
  } finally {
    await client.query('RESET ndd.similarity_threshold');
  }
}

test('lookup (minhash): the rows of mh % q at the threshold, best first', async () => {
  let nonEmpty = 0;
  for (const { mh } of await queries()) {
    for (const t of [0.3, 0.5, 0.8, 1]) {
      const want = await scanLookup(mh, t);
      const got = await lookup(client, { table: 'docs', column: 'mh', idColumn: 'id', query: mh, threshold: t });
      assert.deepEqual(got, want);
      if (want.length > 0) nonEmpty++;
      const limited = await lookup(client, { table: 'docs', column: 'mh', idColumn: 'id', query: mh, threshold: t, limit: 2 });
      assert.deepEqual(limited, want.slice(0, 2));
    }
  }
  assert.ok(nonEmpty > 20);
});

test('lookup (minhash) through a minhash_ops index answers as the scan', async () => {
  await client.query('CREATE INDEX docs_mh_idx ON docs USING gin (mh minhash_ops(shingle_size = 2))');
  try {
    const exact = (await rows(`SELECT minhash_index_exact_threshold('docs', 'mh') AS t`))[0].t;
    assert.ok(exact > 0 && exact < 1);
    await client.query('SET enable_seqscan = off');
    // the helper's condition, similar(), is one the index serves
    const plan = await rows(`EXPLAIN (COSTS OFF) SELECT t.id FROM docs t WHERE similar(t.mh, $1::minhash, $2::float8)`,
      [(await queries())[0].mh, 0.9]);
    assert.match(plan.map((r) => r['QUERY PLAN']).join('\n'), /docs_mh_idx/);
    for (const { mh } of await queries()) {
      for (const t of [exact, 0.9, 1]) {
        await client.query('SET enable_seqscan = on');
        const want = await scanLookup(mh, t);
        await client.query('SET enable_seqscan = off');
        assert.deepEqual(await lookup(client, { table: 'docs', column: 'mh', idColumn: 'id', query: mh, threshold: t }), want);
      }
    }
  } finally {
    await client.query('RESET enable_seqscan');
    await client.query('DROP INDEX docs_mh_idx');
  }
});

test('lookup (simhash): the rows of fp % q within maxDistance, nearest first', async () => {
  for (const { fp } of await queries()) {
    for (const d of [0, 3, 12, 30]) {
      await client.query(`SET ndd.hamming_threshold = ${d}`);
      const want = await rows(
        `SELECT id::bigint AS id, hamming_distance(fp, $1) AS distance FROM docs WHERE fp % $1::simhash ORDER BY 2, 1`, [fp.toString(16).padStart(16, '0')]);
      await client.query('RESET ndd.hamming_threshold');
      assert.deepEqual(await lookup(client, { table: 'docs', column: 'fp', idColumn: 'id', query: fp, maxDistance: d }), want);
    }
  }
  // negative BigInts are the same 64 bits
  const { fp } = (await queries())[0];
  assert.deepEqual(
    await lookup(client, { table: 'docs', column: 'fp', idColumn: 'id', query: BigInt.asIntN(64, fp), maxDistance: 5 }),
    await lookup(client, { table: 'docs', column: 'fp', idColumn: 'id', query: fp, maxDistance: 5 }));
});

test('lookup (minhash_bbit): similarity at least the threshold', async () => {
  for (const { mb } of (await queries()).slice(0, 5)) {
    const want = await rows(
      `SELECT id::bigint AS id, similarity(mb, $1) AS similarity FROM docs WHERE similarity(mb, $1::minhash_bbit) >= 0.5 ORDER BY 2 DESC, 1`, [mb]);
    assert.ok(want.length > 0);
    assert.deepEqual(await lookup(client, { table: 'docs', column: 'mb', idColumn: 'id', query: mb, threshold: 0.5 }), want);
  }
});

async function scanTopK(table, q, k) {
  return rows(`SELECT id::bigint AS id, similarity(mh, $1) AS similarity FROM ${table}
               WHERE mh IS NOT NULL ORDER BY 2 DESC, 1 LIMIT $2`, [q, k]);
}

test('topK equals ORDER BY similarity DESC, id over a scan, without and with indexes', async () => {
  const qs = await queries();
  for (const index of [null, 'minhash_ops(shingle_size = 2)', 'minhash_ops(shingle_size = 2, rows = 1)']) {
    if (index) await client.query(`CREATE INDEX docs_topk_idx ON docs USING gin (mh ${index})`);
    try {
      for (const { mh } of qs) {
        for (const k of [1, 3, 10, 100]) {
          const got = await topK(client, { table: 'docs', column: 'mh', idColumn: 'id', query: mh, k });
          assert.deepEqual(got, await scanTopK('docs', mh, k), `index ${index}, k ${k}`);
        }
      }
    } finally {
      if (index) await client.query('DROP INDEX docs_topk_idx');
    }
  }
  // k defaults to 10
  assert.equal((await topK(client, { table: 'docs', column: 'mh', idColumn: 'id', query: qs[0].mh })).length, 10);
});

// every pair at or above the threshold, by comparing all pairs
async function exactPairs(threshold) {
  return rows(`SELECT a.id::bigint AS "idA", b.id::bigint AS "idB", similarity(a.mh, b.mh) AS similarity, NULL::int AS distance
               FROM docs a JOIN docs b ON a.id < b.id WHERE similarity(a.mh, b.mh) >= $1 ORDER BY 1, 2`, [threshold]);
}

test('pairs equals the exact self-join, for minhash and simhash', async () => {
  for (const t of [0.5, 0.7, 0.9]) {
    const want = await exactPairs(t);
    assert.ok(want.length > 0);
    assert.deepEqual(await pairs(client, { table: 'docs', column: 'mh', idColumn: 'id', threshold: t }), want);
  }
  for (const d of [0, 3, 6]) {
    const want = await rows(
      `SELECT a.id::bigint AS "idA", b.id::bigint AS "idB", simhash_cosine(a.fp, b.fp) AS similarity, hamming_distance(a.fp, b.fp) AS distance
       FROM docs a JOIN docs b ON a.id < b.id WHERE hamming_distance(a.fp, b.fp) <= $1 ORDER BY 1, 2`, [d]);
    assert.deepEqual(await pairs(client, { table: 'docs', column: 'fp', idColumn: 'id', maxDistance: d }), want);
  }
  // no threshold: ndd.similarity_threshold's
  await client.query('SET ndd.similarity_threshold = 0.6');
  try {
    assert.deepEqual(await pairs(client, { table: 'docs', column: 'mh', idColumn: 'id' }), await exactPairs(0.6));
  } finally {
    await client.query('RESET ndd.similarity_threshold');
  }
});

test('pairs with verifyColumn keeps the pairs whose exact jaccard() reaches the threshold', async () => {
  const got = await pairs(client, { table: 'docs', column: 'mh', idColumn: 'id', threshold: 0.6, verifyColumn: 'body' });
  const want = await rows(`SELECT a.id::bigint AS "idA", b.id::bigint AS "idB", jaccard(a.body, b.body, shingle_size => 2) AS similarity, NULL::int AS distance
    FROM docs a JOIN docs b ON a.id < b.id
    WHERE a.mh IS NOT NULL AND b.mh IS NOT NULL AND jaccard(a.body, b.body, shingle_size => 2) >= 0.6 ORDER BY 1, 2`);
  assert.ok(want.length > 0);
  assert.deepEqual(got, want);
});

// connected components of pairs, each labelled by its smallest id
function components(list) {
  const parent = new Map();
  const find = (x) => {
    while (parent.get(x) !== x) x = parent.get(x);
    return x;
  };
  for (const { idA, idB } of list) {
    for (const v of [idA, idB]) if (!parent.has(v)) parent.set(v, v);
    const [a, b] = [find(idA), find(idB)].sort((p, q) => Number(p) - Number(q));
    parent.set(b, a);
  }
  return [...parent.keys()].sort((p, q) => Number(p) - Number(q)).map((id) => ({ id, clusterId: find(id) }));
}

test('clusters are the connected components of the exact pairs', async () => {
  for (const t of [0.4, 0.8]) {
    const want = components(await exactPairs(t));
    assert.ok(want.length > 0);
    assert.deepEqual(await clusters(client, { table: 'docs', column: 'mh', idColumn: 'id', threshold: t }), want);
  }
  // representativeOrder is the server's ORDER BY, passed as a value
  const got = await clusters(client, { table: 'docs', column: 'mh', idColumn: 'id', threshold: 0.4, representativeOrder: 'id DESC' });
  const byCluster = new Map();
  for (const { id, clusterId } of components(await exactPairs(0.4))) {
    byCluster.set(clusterId, [...(byCluster.get(clusterId) || []), id]);
  }
  const want = [];
  for (const ids of byCluster.values()) {
    const rep = ids.reduce((a, b) => (Number(a) > Number(b) ? a : b));
    for (const id of ids) want.push({ id, clusterId: rep });
  }
  want.sort((a, b) => Number(a.id) - Number(b.id));
  assert.deepEqual(got, want);
});

test('hostile table, schema and column names are only names', async () => {
  const { mh, fp } = (await queries())[2];
  const tables = [HOSTILE_TABLE, { schema: HOSTILE_SCHEMA, name: HOSTILE_TABLE }, 'a.b'];
  const names = { column: HOSTILE_SKETCH, idColumn: HOSTILE_ID };
  const plain = { column: 'mh', idColumn: 'id' };
  for (const table of tables) {
    assert.deepEqual(await lookup(client, { table, ...names, query: mh, threshold: 0.3 }),
      await lookup(client, { table: 'docs', ...plain, query: mh, threshold: 0.3 }));
    assert.deepEqual(await lookup(client, { table, column: HOSTILE_FP, idColumn: HOSTILE_ID, query: fp, maxDistance: 10 }),
      await lookup(client, { table: 'docs', column: 'fp', idColumn: 'id', query: fp, maxDistance: 10 }));
    assert.deepEqual(await topK(client, { table, ...names, query: mh, k: 5 }),
      await topK(client, { table: 'docs', ...plain, query: mh, k: 5 }));
    assert.deepEqual(await pairs(client, { table, ...names, threshold: 0.5 }), await exactPairs(0.5));
    assert.deepEqual(await pairs(client, { table, column: HOSTILE_FP, idColumn: HOSTILE_ID, maxDistance: 3 }),
      await pairs(client, { table: 'docs', column: 'fp', idColumn: 'id', maxDistance: 3 }));
    assert.deepEqual(await clusters(client, { table, ...names, threshold: 0.5 }), components(await exactPairs(0.5)));
  }
  // y is still there, and a name that does not exist is an error, not SQL
  assert.deepEqual(await rows('SELECT count(*)::int AS n FROM y'), [{ n: 0 }]);
  await assert.rejects(lookup(client, { table: 'y; DROP TABLE y', column: 'mh', idColumn: 'id', query: mh }), (e) => e.code === '42P01');
  await assert.rejects(topK(client, { table: 'y; DROP TABLE y', column: 'mh', idColumn: 'id', query: mh }), (e) => e.code === '42P01');
  await assert.rejects(pairs(client, { table: 'docs', column: 'mh; DROP TABLE y', idColumn: 'id' }), (e) => e.code === '42703');
  assert.deepEqual(await rows('SELECT count(*)::int AS n FROM y'), [{ n: 0 }]);
  assert.throws(() => escapeIdentifier(''), TypeError);
  assert.throws(() => escapeIdentifier('a\0b'), RangeError);
  assert.equal(escapeIdentifier('x"; DROP TABLE y; --'), '"x""; DROP TABLE y; --"');
});

test('NULL queries match nothing, NULL sketches are never returned', async () => {
  for (const query of [null, undefined]) {
    assert.deepEqual(await lookup(client, { table: 'docs', column: 'mh', idColumn: 'id', query }), []);
    assert.deepEqual(await topK(client, { table: 'docs', column: 'mh', idColumn: 'id', query }), []);
  }
  const all = await topK(client, { table: 'docs', column: 'mh', idColumn: 'id', query: (await queries())[0].mh, k: 10000 });
  const notNull = await rows('SELECT count(*)::int AS n FROM docs WHERE mh IS NOT NULL');
  assert.equal(all.length, notNull[0].n);
  assert.ok(!all.some((r) => r.id === '1002' || r.id === '1003'));
  const p = await pairs(client, { table: 'docs', column: 'mh', idColumn: 'id', threshold: 0.01 });
  assert.ok(!p.some((r) => ['1002', '1003'].includes(r.idA) || ['1002', '1003'].includes(r.idB)));
});

test('bad arguments are refused before any SQL runs', async () => {
  const base = { table: 'docs', column: 'mh', idColumn: 'id' };
  const { mh } = (await queries())[0];
  await assert.rejects(lookup(client, { ...base, query: mh, threshold: 0 }), RangeError);
  await assert.rejects(lookup(client, { ...base, query: mh, threshold: 1.5 }), RangeError);
  await assert.rejects(lookup(client, { ...base, query: 5n, maxDistance: 65 }), RangeError);
  await assert.rejects(lookup(client, { ...base, query: 'v1,...' }), TypeError);
  await assert.rejects(lookup(client, { ...base, query: mh, limit: -1 }), RangeError);
  await assert.rejects(topK(client, { ...base, query: mh, k: 0 }), RangeError);
  await assert.rejects(topK(client, { ...base, query: 5n }), TypeError);
  await assert.rejects(pairs(client, { table: 'docs', column: 'mh' }), TypeError);
  await assert.rejects(pairs(client, { ...base, threshold: 'all' }), RangeError);
  await assert.rejects(lookup(client, { ...base, table: { name: 5 }, query: mh }), TypeError);
});

test('a pool: types registered on a TypeOverrides, helpers through pool.query', async () => {
  const searchPath = (await rows('SHOW search_path'))[0].search_path.replace(/ /g, '');
  const types = new pg.TypeOverrides();
  const pool = new pg.Pool({ max: 2, types, options: `-c search_path=${searchPath}` });
  try {
    const info = await registerTypes(pool, types);
    assert.equal(typeof info.oids.minhash, 'number');
    const [a, b] = await Promise.all([1, 2].map((id) => pool.query('SELECT mh, fp FROM docs WHERE id = $1', [id])));
    assert.ok(a.rows[0].mh instanceof MinHash && b.rows[0].mh instanceof MinHash);
    assert.equal(typeof a.rows[0].fp, 'bigint');
    const q = a.rows[0].mh;
    assert.deepEqual(await topK(pool, { table: 'docs', column: 'mh', idColumn: 'id', query: q, k: 3 }), await scanTopK('docs', q, 3));
  } finally {
    await pool.end();
  }
});
