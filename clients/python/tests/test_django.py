"""Django: fields, lookups, expressions, indexes and the migration
operations, on the nddtest app (tests/nddtest) migrated for real."""

import os
import random

import pytest

pytest.importorskip('django')
pytest.importorskip('psycopg2')

os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'django_settings')
import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import IntegrityError, connection, transaction  # noqa: E402
from django.db.models import Value  # noqa: E402

import ndd  # noqa: E402
from ndd.django import (HammingDistance, MinHashSketch, Similar, Similarity,  # noqa: E402
                        SimilarityDistance, SimHashSketch)
from nddtest.models import Article, Story  # noqa: E402

from corpus import document, near_copy  # noqa: E402


@pytest.fixture(scope='module')
def migrated(ndd_database):
    call_command('migrate', 'nddtest', verbosity=0)
    yield
    # the guard and the clusters are reversed for real; the tables are
    # dropped without reversing NddExtension, which would drop ndd itself
    call_command('migrate', 'nddtest', '0001', verbosity=0)
    with connection.schema_editor() as editor:
        editor.delete_model(Article)
        editor.delete_model(Story)
    call_command('migrate', 'nddtest', 'zero', fake=True, verbosity=0)


@pytest.fixture
def atomic(migrated):
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def distinct_documents(seed, count):
    rng = random.Random(seed)
    return [document(rng, 40) for _ in range(count)]


def add_article(body):
    article = Article.objects.create(body=body, sketch=MinHashSketch(Value(body), shingle_size=2),
                                     fp=SimHashSketch(Value(body), shingle_size=1))
    article.refresh_from_db()
    return article


def server_text(table, column, id_):
    with connection.cursor() as cursor:
        cursor.execute('SELECT %s::text FROM %s WHERE id = %%s' % (
            connection.ops.quote_name(column), connection.ops.quote_name(table)), [id_])
        return cursor.fetchone()[0]


def test_values_round_trip(atomic):
    for body in distinct_documents(40, 5) + ['', 'one']:
        article = add_article(body)
        assert isinstance(article.sketch, ndd.MinHash) and isinstance(article.fp, ndd.SimHash)
        assert article.sketch.to_text() == server_text('nddtest article', 'sketch', article.id)
        assert article.fp.to_text() == server_text('nddtest article', 'fp', article.id)
        # saved back from Python: the same value, and a b-bit sketch made in Python
        article.sketch4 = article.sketch.to_bbit(2)
        article.save()
        with connection.cursor() as cursor:
            cursor.execute('SELECT minhash_bbit(sketch, 2)::text = sketch4::text, sketch::text'
                           ' FROM "nddtest article" WHERE id = %s', [article.id])
            assert cursor.fetchone() == (True, article.sketch.to_text())
        assert Article.objects.get(id=article.id).sketch4 == article.sketch.to_bbit(2)


def test_null(atomic):
    article = Article.objects.create(body='no sketch')
    assert Article.objects.get(id=article.id).sketch is None
    assert list(Article.objects.filter(sketch__isnull=True).values_list('id', flat=True)) == [article.id]


def test_guard_names_the_row(atomic):
    bodies = distinct_documents(41, 4)
    articles = [add_article(body) for body in bodies]
    with pytest.raises(IntegrityError) as raised:
        with transaction.atomic():
            add_article(bodies[2] + ' and a few more words')
    error = ndd.NearDuplicateError.from_exception(raised.value)
    assert error.existing_id == articles[2].id
    assert error.table == 'nddtest article' and error.column == 'sketch'
    assert error.similarity >= error.threshold == 0.8
    # near_duplicates_raised() gives the same, as an exception of its own
    with pytest.raises(ndd.NearDuplicateError) as raised:
        with ndd.near_duplicates_raised(), transaction.atomic():
            add_article(bodies[0] + ' again')
    assert raised.value.existing_id == articles[0].id


def load_corpus(seed=42):
    rng = random.Random(seed)
    bodies = [document(rng, 30) for _ in range(40)]
    bodies += [near_copy(rng, rng.choice(bodies), rng.randrange(4)) for _ in range(40)]
    # the guard would refuse the copies: load around it
    with connection.cursor() as cursor:
        cursor.execute('ALTER TABLE "nddtest article" DISABLE TRIGGER ndd_reject_near_duplicates')
        cursor.execute('INSERT INTO "nddtest article" (body, sketch, fp)'
                       ' SELECT d, minhash_sketch(d, shingle_size => 2), simhash(d, shingle_size => 1)'
                       ' FROM unnest(%s::text[]) d', [bodies])
        cursor.execute('ALTER TABLE "nddtest article" ENABLE TRIGGER ndd_reject_near_duplicates')
        cursor.execute('ANALYZE "nddtest article"')
    return {a.id: a for a in Article.objects.all()}


def test_lookup_and_expressions_equal_python(atomic):
    rows = load_corpus()
    with connection.cursor() as cursor:
        cursor.execute('SET LOCAL ndd.similarity_threshold = 0.7')
        cursor.execute('SET LOCAL ndd.hamming_threshold = 3')
        cursor.execute('SET LOCAL enable_seqscan = off')
    for query in list(rows.values())[::9]:
        similar = Article.objects.filter(sketch__similar=query.sketch)
        assert 'nddtest_article_sketch' in similar.explain()
        assert sorted(similar.values_list('id', flat=True)) == \
            sorted(i for i, a in rows.items() if a.sketch.similarity(query.sketch) >= 0.7)
        within = Article.objects.filter(Similar('sketch', query.sketch, 0.9))
        assert 'nddtest_article_sketch' in within.explain()
        assert sorted(within.values_list('id', flat=True)) == \
            sorted(i for i, a in rows.items() if a.sketch.similarity(query.sketch) >= 0.9)
        near = Article.objects.filter(fp__similar=query.fp)
        assert 'nddtest_article_fp' in near.explain()
        assert sorted(near.values_list('id', flat=True)) == \
            sorted(i for i, a in rows.items() if a.fp.hamming_distance(query.fp) <= 3)
        assert sorted(Article.objects.filter(Similar('fp', query.fp, 5)).values_list('id', flat=True)) == \
            sorted(i for i, a in rows.items() if a.fp.hamming_distance(query.fp) <= 5)
        scored = Article.objects.annotate(
            s=Similarity('sketch', query.sketch), d=SimilarityDistance('sketch', query.sketch),
            h=HammingDistance('fp', query.fp)).order_by('d', 'id')[:10]
        expected = sorted(rows, key=lambda i: (rows[i].sketch.distance(query.sketch), i))[:10]
        assert [a.id for a in scored] == expected
        for a in scored:
            assert a.s == rows[a.id].sketch.similarity(query.sketch) and a.d == 1.0 - a.s
            assert a.h == rows[a.id].fp.hamming_distance(query.fp)


def test_live_clusters_follow_inserts(atomic):
    rng = random.Random(43)
    originals = [document(rng, 40) for _ in range(6)]
    copies = [near_copy(rng, originals[1], 1), near_copy(rng, originals[4], 1)]
    for body in originals + copies:
        Story.objects.create(body=body, sketch=MinHashSketch(Value(body)))
    with connection.cursor() as cursor:
        cursor.execute('SELECT id, cluster_id FROM nddtest_story_clusters ORDER BY id')
        kept = cursor.fetchall()
        cursor.execute("SELECT id, cluster_id FROM near_duplicate_clusters('nddtest_story', 'sketch', 'id', 0.7,"
                       " representative_order => 'length(body) DESC') ORDER BY id")
        assert kept == cursor.fetchall()
    ids = {s.body: s.id for s in Story.objects.all()}
    clusters = dict(kept)
    for original, copy in zip((originals[1], originals[4]), copies):
        assert clusters[ids[original]] == clusters[ids[copy]]
    # a delete leaves the cluster table as a fresh computation would
    Story.objects.filter(id=ids[originals[1]]).delete()
    with connection.cursor() as cursor:
        cursor.execute('SELECT id FROM nddtest_story_clusters ORDER BY id')
        assert [i for i, in cursor.fetchall()] == sorted([ids[originals[4]], ids[copies[1]]])


def test_migration_sql_quotes_names():
    from django.db.migrations.state import ProjectState
    from ndd.django import RejectNearDuplicates
    operation = RejectNearDuplicates('article', 'sketch', threshold=0.8, action='skip', name='no "copies"')
    state = ProjectState.from_apps(django.apps.apps)
    with connection.schema_editor(collect_sql=True) as editor:
        operation.database_forwards('nddtest', editor, state, state)
    with connection.cursor() as cursor:
        cursor.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                       " WHERE extname = 'ndd'")
        schema = cursor.fetchone()[0]
    assert editor.collected_sql == [
        'CREATE TRIGGER "no ""copies""" BEFORE INSERT OR UPDATE ON "nddtest article" FOR EACH ROW EXECUTE '
        "FUNCTION \"%s\".ndd_reject_near_duplicates('sketch', '0.8', 'skip');" % schema]
    with pytest.raises(ValueError):
        RejectNearDuplicates('article', 'sketch', action='skip')
