/*
 * xxl_shard_init.c — the shard folder's set-up at load time (shard.h):
 * its operators registered with the folders whose calls they take over.
 */
#include "postgres.h"

#include "pg/shard/shard.h"
#include "pg/shard/xxl_shard_ops.h"
#include "pg/shard/xxl_shard_stream.h"

void
xxl_shard_init(void)
{
	xxl_shard_sort_init();
	xxl_shard_edges_init();
	xxl_shard_plan_init();
	xxl_shard_statement_init();
}
