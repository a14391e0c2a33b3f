/*
 * xxl_table_pending.c — a statement's pending work on xxl tables, kept
 * until the statement ends: the rows it inserts (xxl_table_write.c) and the
 * rows it deletes (xxl_table_delete.c).  Each kind keeps a list of states,
 * one per (table, command), in TopTransactionContext; this file is what the
 * two lists share: finding a state, adding one, flushing the ones a
 * statement or transaction end reaches, and following subtransactions (a
 * state moves to the parent on commit and is dropped on abort).
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"

#include "pg/table/xxl_table_storage.h"

XxlPending *
xxl_pending_find(XxlPending *list, Oid relid, CommandId cid)
{
	for (XxlPending *p = list; p != NULL; p = p->next)
		if (p->relid == relid && p->cid == cid)
			return p;
	return NULL;
}

void
xxl_pending_push(XxlPending **list, XxlPending *p, Oid relid, CommandId cid,
				 MemoryContext cxt)
{
	p->relid = relid;
	p->cid = cid;
	p->xid = GetCurrentTransactionId();
	p->subid = GetCurrentSubTransactionId();
	p->cxt = cxt;
	p->next = *list;
	*list = p;
}

static void
pending_free(XxlPending *p)
{
	MemoryContextDelete(p->cxt);
	pfree(p);
}

void
xxl_pending_flush(XxlPending **list, Oid relid, CommandId cid, void (*flush) (XxlPending *))
{
	XxlPending **link = list;

	while (*link != NULL)
	{
		XxlPending *p = *link;

		if ((relid != InvalidOid && p->relid != relid) ||
			(cid != InvalidCommandId && p->cid != cid))
		{
			link = &p->next;
			continue;
		}
		*link = p->next;
		flush(p);
		pending_free(p);
	}
}

void
xxl_pending_subxact(XxlPending **list, SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid)
{
	XxlPending **link = list;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;
	while (*link != NULL)
	{
		XxlPending *p = *link;

		if (p->subid != mySubid)
		{
			link = &p->next;
			continue;
		}
		if (event == SUBXACT_EVENT_COMMIT_SUB)
		{
			p->subid = parentSubid;
			link = &p->next;
			continue;
		}
		*link = p->next;
		pending_free(p);
	}
}
