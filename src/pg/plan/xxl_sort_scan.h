/*
 * xxl_sort_scan.h — the custom scan that runs xxl.sort() in FROM without a
 * tuplestore (see xxl_sort_scan.c).
 */
#ifndef XXL_PG_SORT_SCAN_H
#define XXL_PG_SORT_SCAN_H

/* Install the planner hook and register the scan; from _PG_init. */
extern void xxl_sort_scan_init(void);

#endif							/* XXL_PG_SORT_SCAN_H */
