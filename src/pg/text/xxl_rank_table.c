/*
 * xxl_rank_table.c — random access by rank to a stored suffix array (see
 * text.h).  The table is named and opened through the input module
 * (xxl_input_open_table); this file only finds rows by rank in it.
 *
 * A table that xxl.suffix_array_into made (or any heap filled with
 * fixed-width rows in rank order and never changed) holds rank k at a
 * computable place: block (k-1) / m, line k - 1 - block * m + 1, m being
 * the rows on block 0.  Each such fetch is checked (visible, rank = k); the
 * first miss switches to a btree index whose first column is rank, for this
 * and every later lookup.  No index then is an error with a hint to create
 * one.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "pg/text/text.h"

static Oid
find_rank_index(Relation rel, AttrNumber rank_att)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index ix = idx->rd_index;

		if (!OidIsValid(found) && ix->indisvalid && ix->indisready &&
			idx->rd_rel->relam == BTREE_AM_OID && ix->indnkeyatts >= 1 &&
			ix->indkey.values[0] == rank_att &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(idx->rd_indextuple, Anum_pg_index_indexprs, NULL) &&
			idx->rd_indoption[0] == 0)
			found = RelationGetRelid(idx);
		index_close(idx, AccessShareLock);
	}
	list_free(indexes);
	return found;
}

void
xxl_rank_table_open(XxlRankTable *t, const char *name)
{
	Relation	rel = xxl_input_open_named(name);
	char		relkind;

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("the suffix array for xxl.locate must be a table name, not \"%s\"", name),
				 errhint("Store the suffix array with xxl.suffix_array_into.")));
	relkind = rel->rd_rel->relkind;

	memset(t, 0, sizeof(*t));
	t->rel = rel;
	t->name = pstrdup(RelationGetRelationName(rel));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the suffix array \"%s\" must be a table", t->name),
				 errhint("xxl.locate reads the suffix array by rank: pass a table such as xxl.suffix_array_into makes.")));
	if (rel->rd_rel->relhassubclass)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the suffix array \"%s\" must be a table without inheritance children",
						t->name)));
	xxl_sa_columns(RelationGetDescr(rel), t->name, &t->rank_att, &t->pos_att,
					&t->rank_type, &t->pos_type);

	/* the table, or at least the two columns, must be readable */
	xxl_input_check_select(rel, 2, (AttrNumber[]) {t->rank_att, t->pos_att});
	if (xxl_input_rls_in_force(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("xxl.locate cannot read \"%s\": row-level security is in force", t->name)));

	t->snapshot = RegisterSnapshot(GetActiveSnapshot());
	t->slot = table_slot_create(rel, NULL);
	t->nblocks = RelationGetNumberOfBlocks(rel);
	t->layout = rel->rd_rel->relam == HEAP_TABLE_AM_OID && t->nblocks > 0;
	if (t->layout)
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, 0, RBM_NORMAL, NULL);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		t->per_page = PageGetMaxOffsetNumber(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		t->layout = t->per_page > 0;
	}
	t->index_oid = find_rank_index(rel, t->rank_att);
}

/* Rank k's row at its computed place: true with *pos if it is there. */
static bool
layout_fetch(XxlRankTable *t, uint64 k, int64 *pos)
{
	ItemPointerData tid;
	uint64		block = (k - 1) / t->per_page;
	bool		isnull;
	Datum		d;

	if (block >= t->nblocks)
		return false;
	ItemPointerSet(&tid, (BlockNumber) block, (OffsetNumber) ((k - 1) % t->per_page + 1));
	t->layout_fetches++;
	if (!table_tuple_fetch_row_version(t->rel, &tid, t->snapshot, t->slot))
		return false;
	d = slot_getattr(t->slot, t->rank_att, &isnull);
	if (isnull || xxl_int_datum(d, t->rank_type) != (int64) k)
		return false;
	d = slot_getattr(t->slot, t->pos_att, &isnull);
	if (isnull)
		return false;
	*pos = xxl_int_datum(d, t->pos_type);
	return true;
}

/* Position an index scan at the first rank >= k. */
static void
index_start(XxlRankTable *t, uint64 k)
{
	ScanKeyData key;
	RegProcedure ge;
	Datum		arg;

	if (!OidIsValid(t->index_oid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the suffix array \"%s\" is not stored in rank order and has no index on rank",
						t->name),
				 errhint("Create one: CREATE INDEX ON %s (rank);",
						 quote_identifier(t->name))));
	if (t->index == NULL)
	{
		t->index = index_open(t->index_oid, AccessShareLock);
		t->scan = index_beginscan(t->rel, t->index, t->snapshot, 1, 0);
	}
	switch (t->rank_type)
	{
		case INT2OID:
			ge = F_INT2GE;
			arg = Int16GetDatum((int16) Min(k, PG_INT16_MAX));
			break;
		case INT4OID:
			ge = F_INT4GE;
			arg = Int32GetDatum((int32) Min(k, PG_INT32_MAX));
			break;
		default:
			ge = F_INT8GE;
			arg = Int64GetDatum((int64) k);
			break;
	}
	ScanKeyInit(&key, 1, BTGreaterEqualStrategyNumber, ge, arg);
	index_rescan(t->scan, &key, 1, NULL, 0);
	t->index_lookups++;
	t->scan_live = true;
}

/* The next row of the index scan: its rank and pos; false at the end. */
static bool
index_next(XxlRankTable *t, int64 *rank, int64 *pos)
{
	bool		rnull,
				pnull;
	Datum		r,
				p;

	if (!index_getnext_slot(t->scan, ForwardScanDirection, t->slot))
	{
		t->scan_live = false;
		return false;
	}
	r = slot_getattr(t->slot, t->rank_att, &rnull);
	p = slot_getattr(t->slot, t->pos_att, &pnull);
	if (rnull || pnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the suffix array \"%s\" has a null rank or pos", t->name)));
	*rank = xxl_int_datum(r, t->rank_type);
	*pos = xxl_int_datum(p, t->pos_type);
	return true;
}

static void missing_rank(XxlRankTable *t, uint64 k) pg_attribute_noreturn();

static void
missing_rank(XxlRankTable *t, uint64 k)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("rank " UINT64_FORMAT " is missing from the suffix array \"%s\"", k, t->name),
			 errhint("Is it the suffix array of this corpus?  xxl.suffix_array_check tells.")));
}

/* The 1-based position of the suffix of rank k. */
int64
xxl_rank_table_lookup(XxlRankTable *t, uint64 k)
{
	int64		pos,
				rank;

	if (t->nblocks == 0)
		missing_rank(t, k);
	if (t->layout)
	{
		if (layout_fetch(t, k, &pos))
			return pos;
		t->layout = false;
	}
	index_start(t, k);
	if (!index_next(t, &rank, &pos) || rank != (int64) k)
		missing_rank(t, k);
	return pos;
}

int64
xxl_rank_table_walk(XxlRankTable *t, uint64 k, bool first)
{
	int64		pos,
				rank;

	if (first)
		t->scan_live = false;	/* an index scan of lookups is elsewhere */
	if (t->layout && layout_fetch(t, k, &pos))
		return pos;
	t->layout = false;
	if (!t->scan_live)
		index_start(t, k);
	if (!index_next(t, &rank, &pos) || rank != (int64) k)
		missing_rank(t, k);
	return pos;
}

void
xxl_rank_table_close(XxlRankTable *t)
{
	if (t->scan)
		index_endscan(t->scan);
	if (t->index)
		index_close(t->index, AccessShareLock);
	ExecDropSingleTupleTableSlot(t->slot);
	UnregisterSnapshot(t->snapshot);
	table_close(t->rel, NoLock);
}

