#!/usr/bin/env python3
"""Find near-duplicate records in a JSONL file with ndd.

    python3 dedup_jsonl.py input.jsonl clusters.jsonl [--field text] [--threshold 0.8]

Loads every record into a temporary table (its line number as id, the text
of --field, the minhash sketch the server makes of it), asks the server for
near_duplicate_clusters(), and writes one line per cluster:

    {"representative": 3, "members": [3, 17], "records": [{...}, {...}]}

members are line numbers (from 1); the representative is the longest text
of its cluster.  A record with no near-duplicate is in no cluster.  The database is the one libpq's PG* variables name.
"""

import argparse
import json
import sys

import psycopg

from ndd.psycopg import register_ndd


def read_records(path, field):
    records = []
    with open(path, encoding='utf-8') as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            if not isinstance(record.get(field), str):
                raise SystemExit('%s:%d: no text in field %r' % (path, number, field))
            records.append((number, record))
    return records


def find_clusters(conn, records, field, threshold, shingle_size):
    """{representative line: [member lines]} for the records."""
    conn.execute('CREATE TEMPORARY TABLE dedup_records (id bigint PRIMARY KEY, body text NOT NULL,'
                 ' sketch minhash) ON COMMIT DROP')
    with conn.cursor().copy('COPY dedup_records (id, body) FROM STDIN') as copy:
        for number, record in records:
            copy.write_row((number, record[field]))
    conn.execute('UPDATE dedup_records SET sketch = minhash_sketch(body, shingle_size => %s)', [shingle_size])
    conn.execute('ANALYZE dedup_records')
    clusters = {}
    rows = conn.execute("SELECT id, cluster_id FROM near_duplicate_clusters('dedup_records', 'sketch', 'id',"
                        " threshold => %s, representative_order => 'length(body) DESC')"
                        " ORDER BY cluster_id, id", [threshold])
    for member, representative in rows:
        clusters.setdefault(representative, []).append(member)
    return clusters


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('input', help='JSONL file, one record per line')
    parser.add_argument('output', help='JSONL file of clusters ("-" for standard output)')
    parser.add_argument('--field', default='text', help='the field holding the text (default: text)')
    parser.add_argument('--threshold', type=float, default=0.8,
                        help='estimated Jaccard similarity of near-duplicates (default: 0.8)')
    parser.add_argument('--shingle-size', type=int, default=3, help='words per shingle (default: 3)')
    args = parser.parse_args(argv)

    records = read_records(args.input, args.field)
    by_line = dict(records)
    with psycopg.connect() as conn:
        conn.execute('CREATE EXTENSION IF NOT EXISTS ndd')
        register_ndd(conn)
        clusters = find_clusters(conn, records, args.field, args.threshold, args.shingle_size)

    out = sys.stdout if args.output == '-' else open(args.output, 'w', encoding='utf-8')
    try:
        for representative, members in clusters.items():
            out.write(json.dumps({'representative': representative, 'members': members,
                                  'records': [by_line[m] for m in members]}) + '\n')
    finally:
        if out is not sys.stdout:
            out.close()
    duplicates = sum(len(m) - 1 for m in clusters.values())
    print('%d records, %d clusters, %d near-duplicates of a representative'
          % (len(records), len(clusters), duplicates), file=sys.stderr)


if __name__ == '__main__':
    main()
