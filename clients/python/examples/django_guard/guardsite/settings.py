"""Settings of the guard example: a posts app on the PostgreSQL server that
libpq's PG* variables name (PGHOST, PGPORT, PGUSER, PGDATABASE)."""

import os

SECRET_KEY = 'ndd guard example, not for production'
DEBUG = False
USE_TZ = True
INSTALLED_APPS = ['posts']
DATABASES = {'default': {
    'ENGINE': 'django.db.backends.postgresql',
    'NAME': os.environ.get('PGDATABASE', 'postgres'),
    'USER': os.environ.get('PGUSER', ''),
    'PASSWORD': os.environ.get('PGPASSWORD', ''),
    'HOST': os.environ.get('PGHOST', ''),
    'PORT': os.environ.get('PGPORT', ''),
}}
DEFAULT_AUTO_FIELD = 'django.db.models.BigAutoField'
