"""Every ```python block of README.md runs as written, against the server
named by PGHOST, PGPORT, PGUSER and PGDATABASE: one test per block, named by
the line of its fence.

A block runs as a script of its own (a fresh Python, the package on
PYTHONPATH), with two exceptions:

- A block whose first line is a comment naming a file, `# blog/models.py`,
  is that file of a Django project; the blocks of the section "Django" run
  in that project (the app migrated for real, `makemigrations --check`
  seeing the models and the migration agree, then the block itself when it
  is not a file).
- A block preceded by the line `<!-- not run: reason -->` is skipped.

Every table a block creates is dropped after it (and the rows of its
Django app in django_migrations), so that the server is left as found."""

import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)
README = os.path.join(PACKAGE_ROOT, 'README.md')

FILE_COMMENT = re.compile(r'#\s*([\w/]+\.py)\b')
NOT_RUN = re.compile(r'<!--\s*not run:\s*(.*?)\s*-->')


class Block:
    def __init__(self, line, code, section, not_run):
        self.line, self.code, self.section, self.not_run = line, code, section, not_run
        first = code.split('\n', 1)[0]
        match = FILE_COMMENT.match(first)
        self.path = match.group(1) if match else None    # a file of the Django project

    @property
    def django(self):
        return self.section == 'Django'


def readme_blocks(text):
    lines = text.split('\n')
    blocks, section, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('## '):
            section = line[3:].strip()
        fence = re.match(r'(\s*)```python\s*$', line)
        if fence:
            indent = len(fence.group(1))
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != '```':
                body.append(lines[i][indent:])
                i += 1
            assert i < len(lines), 'README.md line %d: the block is not closed' % start
            not_run = NOT_RUN.search(lines[start - 2]) if start >= 2 else None
            blocks.append(Block(start, '\n'.join(body) + '\n', section,
                                not_run.group(1) if not_run else None))
        i += 1
    return blocks


BLOCKS = readme_blocks(open(README, encoding='utf-8').read())
DJANGO_FILES = [b for b in BLOCKS if b.django and b.path and not b.not_run]


def run(args, cwd, extra_path=()):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PACKAGE_ROOT, *extra_path]),
               PYTHONDONTWRITEBYTECODE='1')
    env.pop('DJANGO_SETTINGS_MODULE', None)
    result = subprocess.run([sys.executable] + args, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise AssertionError('%s failed (%d):\n%s\n%s' % (args, result.returncode, result.stdout,
                                                           result.stderr))
    return result


def connect():
    psycopg = pytest.importorskip('psycopg')
    return psycopg.connect(autocommit=True)


TABLES = ("SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
          " WHERE c.relkind IN ('r', 'p', 'v', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
          " AND n.nspname NOT LIKE 'pg_toast%'")


@pytest.fixture
def cleanup(ndd_database):
    """Drops the tables created meanwhile, and forgets the Django apps' migrations."""
    with connect() as conn:
        before = {t for t, in conn.execute(TABLES)}
    apps = []
    yield apps
    with connect() as conn:
        if apps and conn.execute("SELECT to_regclass('django_migrations') IS NOT NULL").fetchone()[0]:
            conn.execute('DELETE FROM django_migrations WHERE app = ANY(%s)', [apps])
        for table, in conn.execute(TABLES).fetchall():
            if table not in before:
                conn.execute('DROP TABLE IF EXISTS %s CASCADE' % table)
        after = {t for t, in conn.execute(TABLES)}
    assert after == before


def django_project(directory):
    """Writes the Django blocks that are files, and a settings module
    installing their apps; returns the apps."""
    apps = sorted({b.path.split('/')[0] for b in DJANGO_FILES})
    for block in DJANGO_FILES:
        path = os.path.join(directory, *block.path.split('/'))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(block.code)
    for root, dirs, files in os.walk(directory):
        if root != str(directory) and '__init__.py' not in files:
            open(os.path.join(root, '__init__.py'), 'w').close()
    with open(os.path.join(directory, 'readme_settings.py'), 'w') as f:
        f.write('from django_settings import *  # noqa: F401,F403\nINSTALLED_APPS = %r\n' % apps)
    return apps


DJANGO_RUNNER = '''
import os, sys
os.environ['DJANGO_SETTINGS_MODULE'] = 'readme_settings'
import django
django.setup()
from django.core.management import call_command
from django.db import connection
call_command('migrate', *sys.argv[2:], verbosity=0)
# the migration is what makemigrations writes for the models (its report on stderr)
call_command('makemigrations', *sys.argv[2:], check=True, dry_run=True, stdout=sys.stderr)
if sys.argv[1] != '-':
    code = open(sys.argv[1], encoding='utf-8').read()
    exec(compile(code, 'README.md block', 'exec'), {'__name__': '__main__'})
'''


PRINT = re.compile(r'^\s*print\(.*\)\s+#\s*(.*?)\s*$')


def check_output(block, stdout):
    """Each print() of the block comments on the line it prints, `...` for
    any text: the output is those lines, in order."""
    expected = [m.group(1) for m in map(PRINT.match, block.code.splitlines()) if m]
    printed = stdout.splitlines()
    assert len(printed) == len(expected), (expected, stdout)
    for comment, line in zip(expected, printed):
        pattern = '.*'.join(re.escape(part) for part in comment.split('...'))
        assert re.fullmatch(pattern, line), 'README.md line %d: %r prints %r' % (block.line, comment, line)


@pytest.mark.parametrize('block', BLOCKS, ids=['line %d' % b.line for b in BLOCKS])
def test_readme_block(block, tmp_path, cleanup):
    if block.not_run:
        pytest.skip('README.md line %d: not run: %s' % (block.line, block.not_run))
    if not block.django:
        script = tmp_path / 'block.py'
        script.write_text(block.code, encoding='utf-8')
        check_output(block, run([str(script)], tmp_path).stdout)
        return
    pytest.importorskip('django')
    pytest.importorskip('psycopg2')
    assert DJANGO_FILES, 'no Django project in the README'
    apps = django_project(tmp_path)
    cleanup.extend(apps)
    script = '-'
    if not block.path:
        script = str(tmp_path / 'block.py')
        with open(script, 'w', encoding='utf-8') as f:
            f.write(block.code)
    runner = tmp_path / 'runner.py'
    runner.write_text(DJANGO_RUNNER)
    check_output(block, run([str(runner), script] + apps, tmp_path, extra_path=[str(tmp_path), HERE]).stdout)


def test_readme_has_blocks():
    assert len(BLOCKS) >= 5


def test_blocks_are_found():
    text = ('# t\n\n## One\n\n```python\nx = 1\n```\n\n```sh\nls\n```\n\n'
            '<!-- not run: needs a GPU -->\n```python\ny = 2\n```\n\n## Django\n\n'
            '- an item:\n\n  ```python\n  # app/models.py\n  z = 3\n  ```\n')
    blocks = readme_blocks(text)
    assert [(b.line, b.code, b.section, b.not_run, b.path) for b in blocks] == [
        (5, 'x = 1\n', 'One', None, None),
        (14, 'y = 2\n', 'One', 'needs a GPU', None),
        (22, '# app/models.py\nz = 3\n', 'Django', None, 'app/models.py')]
