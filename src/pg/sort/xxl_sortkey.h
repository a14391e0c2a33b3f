/*
 * xxl_sortkey.h — ORDER BY lists turned into memcmp-comparable byte keys.
 *
 * xxl_parse_order_by() reads the text that would follow ORDER BY with
 * PostgreSQL's own parser; xxl_sortkey_create() resolves it against a row
 * descriptor; xxl_sortkey_encode() maps a row to a byte string whose
 * unsigned lexicographic order (shorter first on a tie) is exactly the order
 * ORDER BY gives, NULLS FIRST/LAST, DESC and collations included.  The
 * engine can then sort rows without ever calling back into PostgreSQL.
 *
 * Per key column: one null-flag byte (0x00 sorts first: NULL under NULLS
 * FIRST, a value under NULLS LAST), then, for a value, its encoding, every
 * byte inverted under DESC (the flag is not).  Encodings are prefix-free, so
 * columns simply concatenate.  A key with a column in a libc collation
 * other than C, or in an ICU collation in a UTF-8 database, is no byte
 * image: see xxl_sortkey_compare().
 */
#ifndef XXL_PG_SORTKEY_H
#define XXL_PG_SORTKEY_H

#include "access/tupdesc.h"
#include "nodes/pg_list.h"

#include "core/xxl_keycmp.h"

/* One ORDER BY item as written, before it is matched to a column. */
typedef struct XxlSortItem
{
	char	   *colname;		/* column name, or NULL for a position */
	int			position;		/* 1-based column position ("ORDER BY 2") */
	bool		desc;
	bool		nulls_first;
	Oid			collation;		/* explicit COLLATE, else InvalidOid */
} XxlSortItem;

/*
 * Parse order_by ("a DESC NULLS LAST, b COLLATE \"C\", 3") into a List of
 * XxlSortItem.  Errors: ERRCODE_SYNTAX_ERROR for malformed text,
 * ERRCODE_FEATURE_NOT_SUPPORTED for expressions and USING.
 */
extern List *xxl_parse_order_by(const char *order_by);

typedef struct XxlSortKey XxlSortKey;

/*
 * Match the items to desc's columns (ERRCODE_UNDEFINED_COLUMN,
 * ERRCODE_AMBIGUOUS_COLUMN) and check that every key type can be encoded
 * (ERRCODE_FEATURE_NOT_SUPPORTED).  Lives in the current memory context.
 */
extern XxlSortKey *xxl_sortkey_create(TupleDesc desc, List *items);

/*
 * How the engine compares the keys of xxl_sortkey_encode: NULL when they
 * are byte images (memcmp order), else the column-wise comparison of
 * xxl_keycmp.h (a column in a libc collation other than C, or in ICU in
 * a UTF-8 database).  Lives as long as the key.
 */
extern const xxl_key_compare *xxl_sortkey_compare(const XxlSortKey *key);

/* The key's columns: how many, and the attribute each one reads. */
extern int	xxl_sortkey_ncols(const XxlSortKey *key);
extern AttrNumber xxl_sortkey_attno(const XxlSortKey *key, int column);
/* A key column's order: DESC, NULLS FIRST, and its collation (text-like, else InvalidOid). */
extern void xxl_sortkey_column_order(const XxlSortKey *key, int column, bool *desc,
									 bool *nulls_first, Oid *collation);

/* Highest attribute number a key reads (for slot_getsomeattrs). */
extern AttrNumber xxl_sortkey_max_attno(const XxlSortKey *key);

/*
 * The key of one row, given its deformed attributes.  The result points
 * into the key's own buffer and stays valid until the next call.
 * Detoasted copies go into CurrentMemoryContext (reset it per row or batch).
 */
extern const unsigned char *xxl_sortkey_encode(XxlSortKey *key, const Datum *values,
											   const bool *isnull, uint32 *len);

/*
 * Fixed-size keys: when every key column has a fixed-width encoding
 * (integers, floats, boolean, "char", oid, uuid and types based on them),
 * every key is xxl_sortkey_fixed_size() bytes (0 otherwise): a NULL keeps
 * its column's width, padded with zeros.  xxl_sortkey_encode_fixed() writes
 * one key to dst, with no allocation.
 */
extern int	xxl_sortkey_fixed_size(const XxlSortKey *key);
extern void xxl_sortkey_encode_fixed(const XxlSortKey *key, const Datum *values,
									 const bool *isnull, unsigned char *dst);

/*
 * Columns whose value a fixed-size key holds losslessly (integer kinds,
 * boolean, "char", oid) need not travel a second time: the key column
 * index that restores attribute attno, or -1; and the value restored from
 * a key.
 */
extern int	xxl_sortkey_restorable_column(const XxlSortKey *key, AttrNumber attno);
extern Datum xxl_sortkey_restore(const XxlSortKey *key, int column,
								 const unsigned char *keybytes, bool *isnull);

/*
 * Sort keys as a query plan gives them (a Sort node's columns, sort
 * operators, collations and NULLS FIRST flags).
 * xxl_sortkey_plan_column_refused tells, without raising, why one column
 * would not sort here exactly as PostgreSQL sorts it (NULL: it would);
 * xxl_sortkey_create_plan builds the key of columns that all do.
 */
extern const char *xxl_sortkey_plan_column_refused(Oid typid, Oid sortop, Oid collation,
												   bool *desc);
extern XxlSortKey *xxl_sortkey_create_plan(TupleDesc desc, int ncols, const AttrNumber *cols,
										   const Oid *sortops, const Oid *collations,
										   const bool *nulls_first);

/*
 * Variable-size keys hold some columns losslessly too (integer kinds,
 * boolean, "char", oid; text, varchar, bytea and name, in any collation):
 * rows sorted with such a key
 * need not carry those columns again.  xxl_sortkey_var_restorable tells
 * which key columns; xxl_sortkey_restore_var walks one key and sets
 * values/isnull[out_column[c]] for each key column c whose out_column[c] is
 * not -1.  Restored by-reference values live in the key's buffer until the
 * next call.
 */
extern bool xxl_sortkey_var_restorable(const XxlSortKey *key, int column);
extern void xxl_sortkey_restore_var(XxlSortKey *key, const unsigned char *keybytes,
									uint32 klen, const int *out_column, Datum *values,
									bool *isnull);

/* The key types xxl_sortkey_create accepts, for messages and docs. */
extern const char *xxl_sortkey_supported_types(void);

#endif							/* XXL_PG_SORTKEY_H */
