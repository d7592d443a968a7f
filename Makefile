# ndd: near-duplicate detection for PostgreSQL
EXTENSION = ndd
MODULE_big = ndd
OBJS = \
	src/ndd.o \
	src/shingle.o \
	src/minhash.o \
	src/minhash_agg.o \
	src/minhash_bbit.o \
	src/supershingle.o \
	src/lsh.o \
	src/key_filter.o \
	src/components.o \
	src/minhash_gin.o \
	src/minhash_topk.o \
	src/similar_support.o \
	src/trigger.o \
	src/live_clusters.o \
	src/simhash.o \
	src/simhash_keys.o \
	src/simhash_gin.o \
	src/simhash_gist.o \
	src/imatch.o \
	src/spotsigs.o \
	src/simhash_batch.o

EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(EXTENSION).control)
# sql/ndd.sql is the install script of the current version; released
# scripts and upgrade steps are kept as they shipped
DATA = $(filter-out sql/$(EXTENSION)--$(EXTVERSION).sql,$(wildcard sql/$(EXTENSION)--*.sql))
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
PGFILEDESC = "ndd - near-duplicate detection"

REGRESS = shingle minhash minhash_accuracy agg minhash_gin trigger guard pairs nearest names simhash simhash_gin simhash_gist live_clusters imatch_spotsigs bbit_supershingles simhash_batch labels bad_inputs
REGRESS_OPTS = --inputdir=test --load-extension=ndd
ISOLATION = near_duplicate_race live_clusters_race top_k_snapshot
ISOLATION_OPTS = --inputdir=test --load-extension=ndd
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql
	cp $< $@
