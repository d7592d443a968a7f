# ndd: near-duplicate detection for PostgreSQL
EXTENSION = ndd
MODULE_big = ndd
OBJS = \
	src/ndd.o \
	src/base/radix_sort.o \
	src/base/sort_uint64.o \
	src/base/toast_read.o \
	src/base/sketch_column.o \
	src/base/spill.o \
	src/text/shingle.o \
	src/text/shingle_set.o \
	src/text/shingle_group.o \
	src/text/containment.o \
	src/sketch/minhash.o \
	src/sketch/minhash_agg.o \
	src/sketch/minhash_bbit.o \
	src/sketch/weighted_minhash.o \
	src/sketch/supershingle.o \
	src/sketch/simhash.o \
	src/sketch/imatch.o \
	src/sketch/spotsigs.o \
	src/keys/lsh.o \
	src/keys/simhash_keys.o \
	src/keys/key_filter.o \
	src/index/minhash_gin.o \
	src/index/gin_postings.o \
	src/index/minhash_lookup_scan.o \
	src/index/minhash_topk.o \
	src/index/minhash_index_tables.o \
	src/index/simhash_gin.o \
	src/index/simhash_gist.o \
	src/index/similar_support.o \
	src/index/containment_gin.o \
	src/sqlgen/spi_run.o \
	src/sqlgen/sketch_sql.o \
	src/sqlgen/minhash_sql.o \
	src/sqlgen/simhash_sql.o \
	src/features/pairs.o \
	src/features/pairs_citus.o \
	src/features/citus_work.o \
	src/features/discovery_engine.o \
	src/features/discovery_scan.o \
	src/features/discovery_count.o \
	src/features/discovery_summaries.o \
	src/features/discovery_group.o \
	src/features/discovery_pairs.o \
	src/features/discovery_parallel.o \
	src/features/discovery_components.o \
	src/features/discovery_verify.o \
	src/features/components.o \
	src/features/clusters.o \
	src/features/clusters_citus.o \
	src/features/top_k.o \
	src/features/trigger.o \
	src/features/live_clusters.o \
	src/features/maintain_clusters.o \
	src/features/contamination.o \
	src/features/simhash_batch.o \
	src/features/explain.o \
	src/features/token_table.o

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

# ndd's headers by layer: #include "sketch/minhash.h"
PG_CPPFLAGS = -I$(srcdir)/src

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql
	cp $< $@

# PGXS tracks no header dependencies without --enable-depend: a changed
# header (a struct of function pointers, say) rebuilds every object
$(OBJS): $(wildcard src/*/*.h)

# encoding_latin1 runs in a LATIN1 database, encoding_sql_ascii in a
# SQL_ASCII one: one pg_regress run each, with its own output directory
installcheck: installcheck-encodings
.PHONY: installcheck-encodings
installcheck-encodings: submake
	$(foreach t,$(ENCODING_TESTS),$(pg_regress_installcheck) --inputdir=test --load-extension=ndd \
		--outputdir=output_$(t) --dbname=contrib_regression_$(t) \
		--encoding=$(shell echo $(patsubst encoding_%,%,$(t)) | tr a-z A-Z) --no-locale $(t) &&) true
