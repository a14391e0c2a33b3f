/*
 * table.h — the xxl table access method (folder table/), as the rest of
 * the extension sees it: set up once, and asked whether a relation is one
 * of its tables.  Its rows reach the engine's inputs through the run scan
 * it registers with io/ (xxl_input_register_runs), so no other folder
 * needs its internals: those are in xxl_table_storage.h (pages,
 * directory, deleted rows, scans), xxl_table_writers.h (inserts, deletes,
 * merges, statement ends) and xxl_table_nodes.h (custom scans), each
 * level built on the one before.
 */
#ifndef XXL_PG_TABLE_H
#define XXL_PG_TABLE_H

#include "utils/rel.h"

/* Called from _PG_init: the hooks, custom scans and the input's run scan. */
extern void xxl_table_init(void);

/* Whether rel is stored by the xxl access method. */
extern bool xxl_is_table(Relation rel);

#endif							/* XXL_PG_TABLE_H */
