"""The examples, run as a user would run them."""

import json
import os
import random
import re
import subprocess
import sys

import pytest

from corpus import document, near_copy

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(PACKAGE_ROOT, 'examples')


def run(args, cwd, check=True):
    env = dict(os.environ, PYTHONPATH=PACKAGE_ROOT)
    env.pop('DJANGO_SETTINGS_MODULE', None)     # test_django's; the example names its own
    result = subprocess.run([sys.executable] + args, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=120)
    if check and result.returncode != 0:
        raise AssertionError('%s failed (%d):\n%s\n%s' % (args, result.returncode, result.stdout,
                                                           result.stderr))
    return result


# removes the example's table without reversing NddExtension (which would drop ndd)
DJANGO_CLEANUP = ('from django.db import connection; from posts.models import Post\n'
                  'with connection.schema_editor() as e: e.delete_model(Post)\n'
                  'from django.core.management import call_command\n'
                  "call_command('migrate', 'posts', 'zero', fake=True, verbosity=0)")


@pytest.fixture
def django_example(ndd_database):
    pytest.importorskip('django')
    pytest.importorskip('psycopg2')
    cwd = os.path.join(EXAMPLES, 'django_guard')
    run(['manage.py', 'migrate', 'posts'], cwd)
    yield cwd
    run(['manage.py', 'shell', '-c', DJANGO_CLEANUP], cwd)


def test_django_guard_refuses_near_duplicate_post(django_example):
    rng = random.Random(50)
    first, second = document(rng, 40), document(rng, 40)
    published = []
    for body in (first, second):
        out = run(['manage.py', 'post', body], django_example).stdout
        published.append(int(re.fullmatch(r'published post #(\d+)\n', out).group(1)))
    refused = run(['manage.py', 'post', near_copy(rng, second, 1)], django_example, check=False)
    assert refused.returncode == 1
    assert 'refused: near-duplicate of post #%d (similarity ' % published[1] in refused.stderr
    assert second in refused.stderr
    # a different post still goes through
    assert run(['manage.py', 'post', document(rng, 40)], django_example).stdout.startswith('published')


def test_dedup_jsonl(tmp_path, ndd_database):
    pytest.importorskip('psycopg')
    rng = random.Random(51)
    originals = [document(rng, 30) for _ in range(30)]
    lines = [{'id': 'o%d' % i, 'text': t} for i, t in enumerate(originals)]
    # copies of originals 3 (twice) and 7, a line apart
    lines += [{'id': 'c1', 'text': near_copy(rng, originals[3], 1)},
              {'id': 'c2', 'text': originals[3].upper()},
              {'id': 'c3', 'text': originals[7] + ' extra words at the end'}]
    source = tmp_path / 'in.jsonl'
    source.write_text(''.join(json.dumps(line) + '\n' for line in lines))
    target = tmp_path / 'clusters.jsonl'
    result = run([os.path.join(EXAMPLES, 'dedup_jsonl.py'), str(source), str(target), '--threshold', '0.6'],
                 tmp_path)
    clusters = [json.loads(line) for line in target.read_text().splitlines()]
    by_ids = sorted(sorted(r['id'] for r in c['records']) for c in clusters)
    assert by_ids == [['c1', 'c2', 'o3'], ['c3', 'o7']]
    for cluster in clusters:
        assert cluster['representative'] in cluster['members']
        longest = max(cluster['members'], key=lambda m: len(lines[m - 1]['text']))
        assert len(lines[cluster['representative'] - 1]['text']) == len(lines[longest - 1]['text'])
    assert '33 records, 2 clusters, 3 near-duplicates' in result.stderr
