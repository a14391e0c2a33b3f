# bench/shards.mk — sorting a table sharded with postgres_fdw over three
# shard servers (bench/run_shards.sh): PostgreSQL's MergeAppend over the
# shards' sorts, the same with XxlSort on the shards, pgxxl's sharded sort
# and the same rows sorted on one server.  Included by bench/bench.mk.
#
#   make bench-shards                          # from the repository root
#   ROWS=3000000 bash bench/run_shards.sh      # smaller

.PHONY: bench-shards

bench-shards:
	@bash bench/run_shards.sh
