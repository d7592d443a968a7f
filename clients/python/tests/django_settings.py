"""Django settings of the tests: the server named by libpq's PG* variables."""

import os

SECRET_KEY = 'ndd tests'
USE_TZ = True
INSTALLED_APPS = ['nddtest']
DATABASES = {'default': {
    'ENGINE': 'django.db.backends.postgresql',
    'NAME': os.environ.get('PGDATABASE', 'postgres'),
    'USER': os.environ.get('PGUSER', ''),
    'HOST': os.environ.get('PGHOST', ''),
    'PORT': os.environ.get('PGPORT', ''),
}}
DEFAULT_AUTO_FIELD = 'django.db.models.BigAutoField'
