/*
 * xxl_plan_ctas.h — CREATE TABLE AS over an XxlSort writes its pages
 * directly (xxl_plan_ctas.c).
 */
#ifndef XXL_PG_PLAN_CTAS_H
#define XXL_PG_PLAN_CTAS_H

/* Called from _PG_init: the ExecutorRun hook. */
extern void xxl_plan_ctas_init(void);

#endif							/* XXL_PG_PLAN_CTAS_H */
