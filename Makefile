# ndd: near-duplicate detection for PostgreSQL
EXTENSION = ndd
MODULE_big = ndd
OBJS = \
	src/ndd.o \
	src/shingle.o \
	src/minhash.o \
	src/minhash_agg.o \
	src/lsh.o \
	src/key_filter.o \
	src/minhash_gin.o \
	src/trigger.o \
	src/simhash.o \
	src/simhash_keys.o \
	src/simhash_gin.o \
	src/simhash_gist.o

DATA = $(wildcard sql/ndd--*.sql)
PGFILEDESC = "ndd - near-duplicate detection"

REGRESS = shingle minhash minhash_accuracy agg minhash_gin trigger guard pairs names simhash simhash_gin simhash_gist
REGRESS_OPTS = --load-extension=ndd
ISOLATION = near_duplicate_race
ISOLATION_OPTS = --load-extension=ndd
TAP_TESTS = 1

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
