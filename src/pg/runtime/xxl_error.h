/*
 * xxl_error.h — turning an engine error (xxl_status + message) into a
 * PostgreSQL error with a fitting SQLSTATE.  Every operator reports engine
 * failures through this one function, so a given failure looks the same
 * whichever operator hit it.
 */
#ifndef XXL_PG_ERROR_H
#define XXL_PG_ERROR_H

#include "core/xxl_common.h"

/*
 * Raise err as an ERROR.  "what" names the failing step for the message,
 * e.g. "sort".  XXL_ECANCELED first lets PostgreSQL raise the real
 * cancel/timeout/termination error.  Never returns.
 */
extern void xxl_raise_error(const xxl_error *err, const char *what) pg_attribute_noreturn();

#endif							/* XXL_PG_ERROR_H */
