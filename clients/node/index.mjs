// ESM entry: the CommonJS module's exports, so both share one set of classes.
import ndd from './index.js';

export const {
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
} = ndd;

export default ndd;
