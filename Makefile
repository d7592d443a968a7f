# ndd: near-duplicate detection for PostgreSQL
EXTENSION = ndd
MODULE_big = ndd
OBJS = \
	src/ndd.o \
	src/shingle.o \
	src/minhash.o \
	src/minhash_agg.o \
	src/minhash_bbit.o \
	src/weighted_minhash.o \
	src/containment.o \
	src/toast_read.o \
	src/contamination.o \
	src/supershingle.o \
	src/lsh.o \
	src/key_filter.o \
	src/components.o \
	src/clusters.o \
	src/pairs.o \
	src/minhash_gin.o \
	src/gin_postings.o \
	src/minhash_topk.o \
	src/minhash_lookup_scan.o \
	src/minhash_index_tables.o \
	src/similar_support.o \
	src/trigger.o \
	src/token_table.o \
	src/live_clusters.o \
	src/simhash.o \
	src/simhash_keys.o \
	src/simhash_gin.o \
	src/simhash_gist.o \
	src/imatch.o \
	src/spotsigs.o \
	src/explain.o \
	src/simhash_batch.o \
	src/sketch_column.o \
	src/sketch_sql.o \
	src/minhash_sql.o \
	src/simhash_sql.o \
	src/spi_run.o \
	src/sort_uint64.o \
	src/top_k.o \
	src/maintain_clusters.o

EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(EXTENSION).control)
# sql/ndd.sql is the install script of the current version, and the
# upgrade steps sql/ndd--A--B.sql are kept as they shipped: all that
# ALTER EXTENSION ndd UPDATE reads.  The install scripts of released
# versions are the upgrade test's fixtures (test/upgrade), never installed.
DATA = $(wildcard sql/$(EXTENSION)--*--*.sql)
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
PGFILEDESC = "ndd - near-duplicate detection"

# Every file of test/sql is a test.  The encoding suites need a database in
# their own encoding, so they run by their own rule (installcheck-encodings,
# also part of installcheck; ENCODING_TESTS= leaves them out).
ENCODING_TESTS = encoding_latin1 encoding_sql_ascii
REGRESS = $(filter-out encoding_%,$(sort $(basename $(notdir $(wildcard test/sql/*.sql)))))
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

# PGXS tracks no header dependencies without --enable-depend: a changed
# header (a struct of function pointers, say) rebuilds every object
$(OBJS): $(wildcard src/*.h)

# encoding_latin1 runs in a LATIN1 database, encoding_sql_ascii in a
# SQL_ASCII one: one pg_regress run each, with its own output directory
installcheck: installcheck-encodings
.PHONY: installcheck-encodings
installcheck-encodings: submake
	$(foreach t,$(ENCODING_TESTS),$(pg_regress_installcheck) --inputdir=test --load-extension=ndd \
		--outputdir=output_$(t) --dbname=contrib_regression_$(t) \
		--encoding=$(shell echo $(patsubst encoding_%,%,$(t)) | tr a-z A-Z) --no-locale $(t) &&) true
