/*
 * runtime.h — what every operator of the glue runs in (folder runtime/):
 * the xxl.* settings and what an operator derives from them
 * (xxl_guc.h), its lifecycle and statistics (xxl_operator.h), the one
 * mapping of engine errors to SQLSTATEs (xxl_error.h), cancellation and
 * the test hold (xxl_cancel.h), spill files (xxl_spill.h), and the
 * progress every running operator publishes (xxl_progress.h).  Other
 * folders include this header, not the ones it gathers.  It knows no
 * feature.
 */
#ifndef XXL_PG_RUNTIME_H
#define XXL_PG_RUNTIME_H

#include "pg/runtime/xxl_guc.h"
#include "pg/runtime/xxl_error.h"
#include "pg/runtime/xxl_cancel.h"
#include "pg/runtime/xxl_spill.h"
#include "pg/runtime/xxl_operator.h"
#include "pg/runtime/xxl_progress.h"

#endif							/* XXL_PG_RUNTIME_H */
