/*
 * xxl_custom_path.h — what the custom scans over one base relation share
 * when they offer their paths (the xxl table's full and ordered scans,
 * xxl.sort() in FROM): a plain path, and the sequential scan to cost
 * against.
 */
#ifndef XXL_PG_CUSTOM_PATH_H
#define XXL_PG_CUSTOM_PATH_H

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

/*
 * A custom path over rel's target and rows, unparameterized and not
 * parallel-safe; the caller sets its costs, pathkeys, flags and private
 * list.
 */
extern CustomPath *xxl_custom_path(RelOptInfo *rel, const CustomPathMethods *methods);

/* rel's unparameterized sequential scan path, or NULL. */
extern Path *xxl_seqscan_path(RelOptInfo *rel);

#endif							/* XXL_PG_CUSTOM_PATH_H */
