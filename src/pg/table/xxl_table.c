/*
 * xxl_table.c — the folder's set-up at _PG_init (table.h): the handler's
 * run scan registered with the input module, the statement and
 * transaction end hooks, the settings' object access hook, the parse
 * analysis hook and the custom scans.
 */
#include "postgres.h"

#include "pg/table/table.h"
#include "pg/table/xxl_table_nodes.h"

void
xxl_table_init(void)
{
	xxl_table_am_init();
	xxl_table_ends_init();
	xxl_table_options_init();
	xxl_table_analyze_init();
	xxl_table_ordered_init();
	xxl_table_fullscan_init();
	xxl_table_aggscan_init();
}
