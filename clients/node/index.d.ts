// Type declarations of ndd-pg (hand-written; the code is index.js).

/**
 * What a minhash or minhash_bbit value records about how it was made: word or
 * character shingles of a text, or the elements of a text[] or bigint[]; the
 * weighted_* units are those of weighted minhash sketches
 * (weighted_minhash_sketch()), which are ordinary minhash values.  Sketches
 * of arrays (text, bigint, weighted_text, weighted_bigint) have shingleSize 1.
 */
export type Unit =
  | 'word' | 'char' | 'text' | 'bigint'
  | 'weighted_word' | 'weighted_char' | 'weighted_text' | 'weighted_bigint';

/** Anything with node-postgres's query(): a Client, a PoolClient or a Pool. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** Anything with node-postgres's setTypeParser(): a Client or a TypeOverrides. */
export interface TypeParserTarget {
  setTypeParser(oid: number, format: 'text', parse: (text: string) => unknown): void;
}

export interface MinHashFields {
  version?: number;
  numPerm: number;
  unit: Unit;
  shingleSize: number;
  seed: number;
  empty?: boolean;
  values?: readonly number[] | null;
  filled?: readonly number[];
}

/** A minhash sketch, frozen. */
export class MinHash {
  constructor(fields: MinHashFields);
  /** The sketch of the server's text form; throws SyntaxError on anything else. */
  static parse(text: string): MinHash;
  readonly version: number;
  /** K, the number of positions (16 to 1024). */
  readonly numPerm: number;
  readonly unit: Unit;
  /** 1 for sketches of arrays. */
  readonly shingleSize: number;
  readonly seed: number;
  /** Made from no elements: similarity 0 against anything. */
  readonly empty: boolean;
  /** K unsigned 32-bit values; none when empty. */
  readonly values: readonly number[];
  /** Positions filled by densification, ascending. */
  readonly filled: readonly number[];
  /** The server's similarity(this, other), the same double; throws RangeError for sketches made differently. */
  similarity(other: MinHash): number;
  /** The server's this <-> other: 1 - similarity. */
  distance(other: MinHash): number;
  /** The server's text form, byte for byte. */
  toString(): string;
  /** The text form, for node-postgres query parameters. */
  toPostgres(): string;
  toJSON(): string;
}

export interface MinHashBbitFields {
  version?: number;
  numPerm: number;
  unit: Unit;
  shingleSize: number;
  seed: number;
  bits: 1 | 2 | 4 | 8;
  empty?: boolean;
  values?: readonly number[] | null;
}

/** A minhash_bbit value (the lowest b bits of each position), frozen. */
export class MinHashBbit {
  constructor(fields: MinHashBbitFields);
  /** The value of the server's text form; throws SyntaxError on anything else. */
  static parse(text: string): MinHashBbit;
  readonly version: number;
  readonly numPerm: number;
  readonly unit: Unit;
  readonly shingleSize: number;
  readonly seed: number;
  /** b: 1, 2, 4 or 8. */
  readonly bits: 1 | 2 | 4 | 8;
  readonly empty: boolean;
  /** K values of b bits; none when empty. */
  readonly values: readonly number[];
  /** The server's similarity(this, other), the same double; throws RangeError for values made differently. */
  similarity(other: MinHashBbit): number;
  toString(): string;
  toPostgres(): string;
  toJSON(): string;
}

/** A simhash's text form (16 hex digits) as an unsigned BigInt. */
export function parseSimhash(text: string): bigint;

/** A BigInt's simhash text form; a negative BigInt is read as two's complement. */
export function formatSimhash(value: bigint): string;

/** The number of bits in which two fingerprints differ, as hamming_distance(). */
export function hammingDistance(a: bigint, b: bigint): number;

/** A value as a query parameter: sketches as their text form, BigInts as simhash, arrays element-wise. */
export type SqlValue = MinHash | MinHashBbit | bigint | null | undefined | SqlValue[];
export type SqlText = string | null | SqlText[];
export function toSql(value: SqlValue): SqlText;

export interface Registered {
  /** The schema ndd is installed in. */
  schema: string;
  oids: { minhash: number; minhash_bbit: number; simhash: number };
}

/**
 * Look up the OIDs of ndd's types in the connected database and install text
 * parsers for them and their arrays on the client, or on `types` when given
 * (a pg.TypeOverrides to pass to a Pool).
 */
export function registerTypes(client: Queryable & Partial<TypeParserTarget>, types?: TypeParserTarget): Promise<Registered>;

/** An identifier in double quotes, inner quotes doubled. */
export function escapeIdentifier(name: string): string;

/** A table: one identifier (never split at dots), or a schema and a name. */
export type Table = string | { schema?: string; name: string };

interface Columns {
  table: Table;
  /** The sketch column. */
  column: string;
  /** A column castable to bigint. */
  idColumn: string;
}

export interface LookupOptions extends Columns {
  /** A MinHash, a MinHashBbit or a simhash BigInt; null matches nothing. */
  query: MinHash | MinHashBbit | bigint | null | undefined;
  /** For sketches: similarity at least this, in (0, 1]; default 0.8. */
  threshold?: number;
  /** For simhash: Hamming distance at most this, 0 to 64; default 3. */
  maxDistance?: number;
  limit?: number;
}

/** ids are int8, which node-postgres returns as strings unless told otherwise. */
export type Id = string;

export interface SimilarRow {
  id: Id;
  similarity: number;
}

export interface NearRow {
  id: Id;
  distance: number;
}

/** Rows similar to a query: best first, ties by id. */
export function lookup(client: Queryable, options: LookupOptions & { query: MinHash | MinHashBbit }): Promise<SimilarRow[]>;
export function lookup(client: Queryable, options: LookupOptions & { query: bigint }): Promise<NearRow[]>;
export function lookup(client: Queryable, options: LookupOptions): Promise<SimilarRow[] | NearRow[]>;

export interface TopKOptions extends Columns {
  query: MinHash | null | undefined;
  /** Default 10. */
  k?: number;
}

/** near_duplicate_top_k: the k most similar rows, best first, ties by id. */
export function topK(client: Queryable, options: TopKOptions): Promise<SimilarRow[]>;

export interface DiscoveryOptions extends Columns {
  /** minhash: default ndd.similarity_threshold. */
  threshold?: number | null;
  /** simhash: 0 to 6, default ndd.hamming_threshold. */
  maxDistance?: number | null;
  /** The text the sketches were made from: decide by exact jaccard(). */
  verifyColumn?: string | null;
}

export interface PairRow {
  idA: Id;
  idB: Id;
  similarity: number;
  /** simhash only; null for minhash. */
  distance: number | null;
}

/** near_duplicate_pairs, ordered by idA, idB. */
export function pairs(client: Queryable, options: DiscoveryOptions): Promise<PairRow[]>;

export interface ClusterOptions extends DiscoveryOptions {
  /** An ORDER BY list over the table's columns, run by the server with the caller's rights. */
  representativeOrder?: string | null;
}

export interface ClusterRow {
  id: Id;
  clusterId: Id;
}

/** near_duplicate_clusters, ordered by id. */
export function clusters(client: Queryable, options: ClusterOptions): Promise<ClusterRow[]>;

declare const ndd: {
  MinHash: typeof MinHash;
  MinHashBbit: typeof MinHashBbit;
  parseSimhash: typeof parseSimhash;
  formatSimhash: typeof formatSimhash;
  hammingDistance: typeof hammingDistance;
  toSql: typeof toSql;
  registerTypes: typeof registerTypes;
  escapeIdentifier: typeof escapeIdentifier;
  lookup: typeof lookup;
  topK: typeof topK;
  pairs: typeof pairs;
  clusters: typeof clusters;
};
export default ndd;
