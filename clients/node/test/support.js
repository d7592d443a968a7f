'use strict';
// Shared by the tests: a connection to the server PG* names, a schema of
// their own, and deterministic documents.

const pg = require('pg');

// mulberry32: a small seeded generator, so every run sees the same data
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Families of near-duplicates: `families` base texts of `length` words, each
// with `variants` copies that have 1 to 12 words replaced; ids from 1.
function documents({ seed = 1, families = 12, variants = 3, length = 40 } = {}) {
  const r = rng(seed);
  const word = () => 'w' + Math.floor(r() * 400);
  const docs = [];
  for (let f = 0; f < families; f++) {
    const base = Array.from({ length }, word);
    docs.push(base.join(' '));
    for (let v = 0; v < variants; v++) {
      const copy = base.slice();
      const changes = 1 + Math.floor(r() * 12);
      for (let c = 0; c < changes; c++) copy[Math.floor(r() * length)] = word();
      docs.push(copy.join(' '));
    }
  }
  return docs.map((body, i) => ({ id: i + 1, body }));
}

// A connected client in a fresh schema (first on its search_path, ndd's
// schema after it), with ndd created if it is not there yet.
async function connect(label) {
  const client = new pg.Client();
  await client.connect();
  try {
    await setUp(client, label);
  } catch (err) {
    await client.end();
    throw err;
  }
  return client;
}

async function setUp(client, label) {
  await client.query('SET client_min_messages = warning');
  await client.query('CREATE EXTENSION IF NOT EXISTS ndd');
  const { rows } = await client.query(
    `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'ndd'`);
  const schema = `ndd_node_${label}_${process.pid}`;
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`SELECT pg_catalog.set_config('search_path', $1, false)`,
    [`${client.escapeIdentifier(schema)}, ${client.escapeIdentifier(rows[0].nspname)}`]);
  client.testSchema = schema;
}

async function disconnect(client) {
  if (!client) return;
  try {
    if (client.testSchema) await client.query(`DROP SCHEMA IF EXISTS ${client.testSchema} CASCADE`);
  } finally {
    await client.end();
  }
}

// Insert documents into table `name` (id bigint, body text), in one statement.
async function loadDocuments(client, name, docs) {
  await client.query(`CREATE TABLE ${name} (id bigint PRIMARY KEY, body text)`);
  await client.query(`INSERT INTO ${name} SELECT * FROM unnest($1::bigint[], $2::text[])`,
    [docs.map((d) => d.id), docs.map((d) => d.body)]);
}

module.exports = { rng, documents, connect, disconnect, loadDocuments };
