/*
 * xxl_error.c — maps the engine's status codes onto SQLSTATEs (see
 * xxl_error.h).  The engine never includes PostgreSQL headers, so this is
 * the only place where its errors meet ereport.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "pg/runtime/xxl_error.h"
#include "pg/runtime/xxl_guc.h"

/*
 * Which setting set an operator's memory budget, with its value: xxl.memory,
 * or when it is -1 the setting it follows (maintenance_work_mem for the SQL
 * functions, work_mem for sorts inside plans), never "-1".
 */
static char *
budget_source(void)
{
	if (xxl_memory_kb >= 0)
		return psprintf("xxl.memory (currently %s)", GetConfigOptionByName("xxl.memory", NULL, true));
	return psprintf("which xxl.memory = -1 takes from maintenance_work_mem (currently %s) for xxl "
					"functions and from work_mem (currently %s) for sorts in plans",
					GetConfigOptionByName("maintenance_work_mem", NULL, true),
					GetConfigOptionByName("work_mem", NULL, true));
}

void
xxl_raise_error(const xxl_error *err, const char *what)
{
	const char *msg = err->message[0] ? err->message : xxl_status_name(err->code);

	/* errno for %m in the messages below */
	errno = err->sys_errno;

	switch (err->code)
	{
		case XXL_ECANCELED:

			/*
			 * The cancel hook saw a pending cancel, timeout or termination:
			 * let PostgreSQL raise its own error for it (the right message
			 * and SQLSTATE: 57014 for cancel and statement_timeout, 57P01
			 * for termination).  If it declines (interrupts held off), say
			 * it ourselves.
			 */
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
		case XXL_ENOMEM:
			/* the budget was too small, or the system refused memory within it */
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("%s ran out of memory: %s", what, msg),
					 err->sys_errno != 0 ?
					 errhint("The system could not provide memory within the budget, %s; lower it or free memory.",
							 budget_source()) :
					 errhint("Raise the budget, %s.", budget_source())));
			break;
		case XXL_ENOSPC:
			ereport(ERROR,
					(errcode(ERRCODE_DISK_FULL),
					 errmsg("%s could not write a spill file: %s", what, msg),
					 errhint("Free space on the spill disks or list others in xxl.disks.")));
			break;
		case XXL_ELIMIT:
			/* the same words PostgreSQL uses for its own temporary files */
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("temporary file size exceeds temp_file_limit (%dkB)",
							temp_file_limit),
					 errdetail("%s: %s", what, msg)));
			break;
		case XXL_EOPEN:
			ereport(ERROR,
					(errcode(err->sys_errno == ENOENT ? ERRCODE_UNDEFINED_FILE : ERRCODE_IO_ERROR),
					 errmsg("%s could not create a spill file: %s", what, msg),
					 errhint("Check that the directories in xxl.disks exist and are writable by the server.")));
			break;
		case XXL_EIO:
			ereport(ERROR,
					(errcode(ERRCODE_IO_ERROR),
					 errmsg("%s: I/O error on a spill file: %s", what, msg)));
			break;
		case XXL_EINVAL:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: %s", what, msg)));
			break;
		case XXL_ERANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s: %s", what, msg)));
			break;
		case XXL_OK:
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("%s failed: %s (status %d)", what, msg, (int) err->code)));
			break;
	}
	pg_unreachable();
}
