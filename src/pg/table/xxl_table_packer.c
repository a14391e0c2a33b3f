/*
 * xxl_table_packer.c — the writer of packed data pages (XxlPacker;
 * xxl_table_storage.h has the layout, xxl_table_packed.c the readers).
 *
 * A segment writer adds a page's rows one by one.  The packer keeps, row
 * by row, what the page would take packed and what it takes plain; the
 * page is full when neither holds the next row, and it is written in
 * whichever form holds more rows (plain when they tie: nothing to
 * decode).  So packing never costs pages: columns that do not shrink
 * (random floats, uuids, long distinct strings) give plain pages.
 *
 * Columns, as the rows' format has them:
 *  - integers (by value, 1, 2, 4 or 8 bytes): bit-packed by frame of
 *    reference or delta (core/xxl_colpack.h), the smaller;
 *  - other fixed-width values: their bytes back to back;
 *  - values of variable width (varlenas as rows hold them, cstrings): a
 *    dictionary of the page's distinct values and a bit-packed code per
 *    row, when that is smaller (a column of few distinct values), else
 *    the values back to back with an offset each.
 * A page of rows of variable width is limited to what its rows take
 * decoded (XXL_PACKED_DECODED_MAX): readers decode it into rows laid out
 * as a plain page's, whose offsets are 16 bits.
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "core/xxl_colpack.h"
#include "pg/table/xxl_table_storage.h"
#include "pg/runtime/runtime.h"

/* Rows of more columns, or fixed rows wider than this, stay plain. */
#define PACK_MAX_COLS XXL_BYVAL_MAX_COLS
#define PACK_MAX_WIDTH 512
/* Distinct values a dictionary holds at most (codes of 8 bits). */
#define DICT_MAX 256
#define DICT_SLOTS (2 * DICT_MAX)
/* The rows' bytes the packer holds: a packed page's rows decoded, and one more. */
#define ARENA_BYTES (XXL_PACKED_DECODED_MAX + BLCKSZ)

typedef enum PackKind
{
	PACK_INT,
	PACK_RAW,
	PACK_VAR
} PackKind;

/* A dictionary entry: one distinct value of the page, in the arena. */
typedef struct DictEntry
{
	uint32		hash;
	uint32		len;
	uint32		at;				/* its bytes in the arena */
} DictEntry;

typedef struct PackCol
{
	PackKind	kind;
	int			width;			/* attlen: > 0, or -1 (varlena), -2 (cstring) */
	int			offset;			/* fixed rows: where the value lies in the row */
	bool		hasnull;
	xxl_colstats stats;			/* PACK_INT */
	Size		var_bytes;		/* PACK_VAR: the non-null values' bytes */
	int			ndict;			/* PACK_VAR: distinct values, while there are few */
	bool		dict_over;		/* more than DICT_MAX */
	Size		dict_bytes;
	DictEntry  *dict;
	int16	   *slots;			/* open addressing into dict (-1: empty) */
	uint8	   *codes;			/* each row's entry (NULL: 0), while the dictionary holds */
} PackCol;

/* What a column would be with the next row (before it is kept). */
typedef struct ColTrial
{
	xxl_colstats stats;
	bool		null;
	const char *value;
	uint32		len;
	uint32		hash;
	int			slot;			/* PACK_VAR: its slot; found: the entry there */
	bool		found;
} ColTrial;

struct XxlPacker
{
	const XxlRowFormat *fmt;
	int			natts;
	int			bitmap_bytes;
	int			row_width;		/* 0: variable */
	PackCol    *cols;
	ColTrial   *trial;
	char	   *arena;			/* the page's rows so far, as the writer gave them */
	uint32	   *row_at;
	uint32	   *row_len;
	Size		arena_used;
	int			n;
	int			packed_n;		/* rows the packed page holds: n until it is full */
	bool		packed_full;
	int			plain_n;
	bool		plain_full;
	Size		plain_bytes;	/* what the rows take on a plain page */
	Size		decoded_bytes;	/* variable rows: what they take decoded */
	Size		packed_room;
	Size		plain_room;
	int64	   *vals;
	const char **vp;			/* one row's values, and their lengths */
	uint32	   *vl;
	/* every kept row's, in the arena, column c's at c * XXL_PAGE_ROWS (while packing goes on) */
	const char **all_vp;
	uint32	   *all_vl;
};

/* The value of an integer column of width bytes, sign-extended. */
static inline int64
read_int(const char *p, int width)
{
	switch (width)
	{
		case 1:
			return *(const int8 *) p;
		case 2:
			{
				int16		v;

				memcpy(&v, p, 2);
				return v;
			}
		case 4:
			{
				int32		v;

				memcpy(&v, p, 4);
				return v;
			}
		default:
			{
				int64		v;

				memcpy(&v, p, 8);
				return v;
			}
	}
}

static inline bool
row_col_null(const char *row, int c)
{
	return (row[c / 8] >> (c % 8)) & 1;
}

/*
 * Where each column's value lies in a row as the writer packed it, and
 * its length (NULL: no value).  Fixed rows keep a NULL's zeroed place;
 * variable rows give it no bytes.
 */
static void
row_values(const XxlPacker *pk, const char *row, const char **vp, uint32 *vl)
{
	const char *p = row + pk->bitmap_bytes;

	for (int c = 0; c < pk->natts; c++)
	{
		const PackCol *col = &pk->cols[c];
		uint32		len;

		if (pk->row_width > 0)
		{
			vp[c] = row_col_null(row, c) ? NULL : row + col->offset;
			vl[c] = col->width;
			continue;
		}
		if (row_col_null(row, c))
		{
			vp[c] = NULL;
			vl[c] = 0;
			continue;
		}
		len = col->width > 0 ? col->width : col->width == -1 ? VARSIZE_ANY(p) : strlen(p) + 1;
		vp[c] = p;
		vl[c] = len;
		p += len;
	}
}

static void reset(XxlPacker *pk);

XxlPacker *
xxl_packer_begin(const XxlRowFormat *fmt)
{
	XxlPacker  *pk;
	int			offset;

	if (!xxl_table_compression || fmt->row_width > PACK_MAX_WIDTH ||
		fmt->natts < 1 || fmt->natts > PACK_MAX_COLS)
		return NULL;
	pk = palloc0(sizeof(XxlPacker));
	pk->fmt = fmt;
	pk->natts = fmt->natts;
	pk->bitmap_bytes = fmt->bitmap_bytes;
	pk->row_width = fmt->row_width;
	pk->cols = palloc0(sizeof(PackCol) * fmt->natts);
	pk->trial = palloc0(sizeof(ColTrial) * fmt->natts);
	pk->arena = palloc(fmt->row_width > 0 ? (Size) XXL_PAGE_ROWS * fmt->row_width : ARENA_BYTES);
	pk->row_at = palloc(sizeof(uint32) * XXL_PAGE_ROWS);
	pk->row_len = palloc(sizeof(uint32) * XXL_PAGE_ROWS);
	pk->vals = palloc(sizeof(int64) * XXL_PAGE_ROWS);
	pk->vp = palloc(sizeof(char *) * fmt->natts);
	pk->vl = palloc(sizeof(uint32) * fmt->natts);
	pk->all_vp = palloc(sizeof(char *) * XXL_PAGE_ROWS * fmt->natts);
	pk->all_vl = palloc(sizeof(uint32) * XXL_PAGE_ROWS * fmt->natts);
	offset = fmt->bitmap_bytes;
	for (int c = 0; c < fmt->natts; c++)
	{
		Form_pg_attribute att = TupleDescAttr(fmt->desc, c);
		PackCol    *col = &pk->cols[c];

		col->width = att->attlen;
		col->offset = offset;
		if (att->attlen < 0)
		{
			col->kind = PACK_VAR;
			col->dict = palloc(sizeof(DictEntry) * DICT_MAX);
			col->slots = palloc(sizeof(int16) * DICT_SLOTS);
			col->codes = palloc(XXL_PAGE_ROWS);
		}
		else if (att->attbyval && (att->attlen == 1 || att->attlen == 2 ||
								   att->attlen == 4 || att->attlen == 8))
			col->kind = PACK_INT;
		else
			col->kind = PACK_RAW;
		offset += Max(att->attlen, 0);
	}
	pk->plain_room = xxl_page_max_row(fmt->row_width);
	pk->packed_room = BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(XxlPageOpaque)) -
		sizeof(XxlPackedCol) * fmt->natts;
	reset(pk);
	return pk;
}

/* An empty page in the making. */
static void
reset(XxlPacker *pk)
{
	pk->n = 0;
	pk->arena_used = 0;
	pk->packed_full = pk->plain_full = false;
	pk->plain_bytes = pk->decoded_bytes = 0;
	for (int c = 0; c < pk->natts; c++)
	{
		PackCol    *col = &pk->cols[c];

		xxl_colstats_reset(&col->stats);
		col->hasnull = false;
		col->var_bytes = 0;
		col->ndict = 0;
		col->dict_over = false;
		col->dict_bytes = 0;
		if (col->kind == PACK_VAR)
			memset(col->slots, -1, sizeof(int16) * DICT_SLOTS);
	}
}

void
xxl_packer_end(XxlPacker *pk)
{
	for (int c = 0; c < pk->natts; c++)
		if (pk->cols[c].kind == PACK_VAR)
		{
			pfree(pk->cols[c].dict);
			pfree(pk->cols[c].slots);
			pfree(pk->cols[c].codes);
		}
	pfree(pk->cols);
	pfree(pk->trial);
	pfree(pk->arena);
	pfree(pk->row_at);
	pfree(pk->row_len);
	pfree(pk->vals);
	pfree(pk->vp);
	pfree(pk->vl);
	pfree(pk->all_vp);
	pfree(pk->all_vl);
	pfree(pk);
}

int
xxl_packer_rows(const XxlPacker *pk)
{
	return pk->n;
}

/* The dictionary slot of a value: where it is, or the empty slot it would take. */
static int
dict_slot(const PackCol *col, const char *arena, const char *v, uint32 len, uint32 hash,
		  bool *found)
{
	int			s = hash % DICT_SLOTS;

	for (;;)
	{
		int			e = col->slots[s];

		if (e < 0)
		{
			*found = false;
			return s;
		}
		if (col->dict[e].hash == hash && col->dict[e].len == len &&
			memcmp(arena + col->dict[e].at, v, len) == 0)
		{
			*found = true;
			return s;
		}
		s = (s + 1) % DICT_SLOTS;
	}
}

/*
 * Bytes a variable column takes with rows rows: its dictionary (an offset
 * per entry and one past the last, the entries, a code per row) or its
 * values (an offset per row and one past the last, the values), the smaller;
 * which one into *dict.
 */
static Size
var_bytes(Size values, int ndict, bool dict_over, Size dict_bytes, int rows, bool *dict)
{
	Size		plain = sizeof(uint16) * (rows + 1) + values;
	Size		coded;

	*dict = false;
	if (dict_over || ndict == 0)
		return plain;
	coded = sizeof(uint16) * (ndict + 1) + dict_bytes + xxl_bitpack_bytes(rows, xxl_bits_for(ndict - 1));
	if (coded < plain)
	{
		*dict = true;
		return coded;
	}
	return plain;
}

/* Bytes column c takes on a packed page of rows rows (with the trial's row when trial). */
static Size
column_bytes(const PackCol *col, const ColTrial *t, int rows, xxl_colpack *pack, bool *dict)
{
	bool		hasnull = col->hasnull || (t && t->null);
	Size		bytes = hasnull ? (rows + 7) / 8 : 0;
	xxl_colpack dummy;
	bool		dummy_dict;

	switch (col->kind)
	{
		case PACK_INT:
			return bytes + xxl_colpack_choose(t ? &t->stats : &col->stats, rows, !hasnull,
											  pack ? pack : &dummy);
		case PACK_RAW:
			return bytes + (Size) rows * col->width;
		case PACK_VAR:
			{
				bool		added = t && !t->null;
				bool		new_entry = added && !t->found;
				int			ndict = col->ndict + (new_entry ? 1 : 0);

				return bytes + var_bytes(col->var_bytes + (added ? t->len : 0), ndict,
										 col->dict_over || ndict > DICT_MAX,
										 col->dict_bytes + (new_entry ? t->len : 0), rows,
										 dict ? dict : &dummy_dict);
			}
	}
	return bytes;
}

bool
xxl_packer_add(XxlPacker *pk, const char *row, uint32 len)
{
	if (pk->n >= XXL_PAGE_ROWS)
		return false;
	if (!pk->plain_full &&
		pk->plain_bytes + len + (pk->row_width > 0 ? 0 : sizeof(uint16)) > pk->plain_room)
	{
		pk->plain_full = true;
		pk->plain_n = pk->n;
	}
	if (!pk->packed_full && pk->row_width == 0 &&
		pk->decoded_bytes + len + sizeof(uint16) > XXL_PACKED_DECODED_MAX)
	{
		pk->packed_full = true;
		pk->packed_n = pk->n;
	}
	if (!pk->packed_full)
	{
		Size		bytes = 0;

		row_values(pk, row, pk->vp, pk->vl);
		for (int c = 0; c < pk->natts; c++)
		{
			PackCol    *col = &pk->cols[c];
			ColTrial   *t = &pk->trial[c];

			t->null = pk->vp[c] == NULL;
			t->value = pk->vp[c];
			t->len = pk->vl[c];
			if (col->kind == PACK_INT)
			{
				t->stats = col->stats;
				if (!t->null)
					xxl_colstats_add(&t->stats, read_int(t->value, col->width));
			}
			else if (col->kind == PACK_VAR && !t->null && !col->dict_over)
			{
				t->hash = hash_bytes((const unsigned char *) t->value, t->len);
				t->slot = dict_slot(col, pk->arena, t->value, t->len, t->hash, &t->found);
			}
			else
				t->found = false;
			bytes += column_bytes(col, t, pk->n + 1, NULL, NULL);
		}
		if (bytes > pk->packed_room)
		{
			pk->packed_full = true;
			pk->packed_n = pk->n;
		}
	}
	if (pk->packed_full && pk->plain_full)
		return false;
	/*
	 * The row is kept: into the arena, and while packing goes on, its
	 * values (where they lie in the arena) and the columns' state, so that
	 * a packed page is written without parsing or hashing its rows again.
	 */
	pk->row_at[pk->n] = pk->arena_used;
	pk->row_len[pk->n] = len;
	memcpy(pk->arena + pk->arena_used, row, len);
	if (!pk->packed_full)
		for (int c = 0; c < pk->natts; c++)
		{
			PackCol    *col = &pk->cols[c];
			ColTrial   *t = &pk->trial[c];
			Size		at = (Size) c * XXL_PAGE_ROWS + pk->n;

			pk->all_vp[at] = t->null ? NULL : pk->arena + pk->arena_used + (t->value - row);
			pk->all_vl[at] = t->len;
			col->hasnull |= t->null;
			if (col->kind == PACK_INT)
				col->stats = t->stats;
			else if (col->kind == PACK_VAR && !t->null)
			{
				col->var_bytes += t->len;
				if (!col->dict_over && !t->found)
				{
					if (col->ndict == DICT_MAX)
						col->dict_over = true;
					else
					{
						DictEntry  *e = &col->dict[col->ndict];

						e->hash = t->hash;
						e->len = t->len;
						e->at = (uint32) (pk->all_vp[at] - pk->arena);
						col->slots[t->slot] = (int16) col->ndict++;
						col->dict_bytes += t->len;
					}
				}
				if (!col->dict_over)
					col->codes[pk->n] = (uint8) col->slots[t->slot];
			}
			else if (col->kind == PACK_VAR)
				col->codes[pk->n] = 0;
		}
	pk->arena_used += len;
	pk->plain_bytes += len + (pk->row_width > 0 ? 0 : sizeof(uint16));
	pk->decoded_bytes += len + sizeof(uint16);
	pk->n++;
	return true;
}

/* The rows gathered as a plain page. */
static void
finish_plain(XxlPacker *pk, Page page, uint32 segno)
{
	xxl_page_init(page, pk->fmt, segno);
	for (int i = 0; i < pk->n; i++)
		if (!xxl_page_add(page, pk->arena + pk->row_at[i], pk->row_len[i]))
			elog(ERROR, "xxl table: a packed page's rows do not fit a plain page");
}

/* A variable column's values as a dictionary (entries and codes) or back to back, from at. */
static Size
put_var_column(XxlPacker *pk, int c, Page page, Size at, bool dict, XxlPackedCol *pc)
{
	PackCol    *col = &pk->cols[c];
	char	   *base = (char *) page + at;
	int			n = pk->n;

	if (dict)
	{
		uint16		off = 0;
		xxl_colpack pack = {XXL_COLPACK_FOR, xxl_bits_for(col->ndict - 1), 0, 0};
		Size		entries = sizeof(uint16) * (col->ndict + 1);

		pc->enc = XXL_PACKED_DICT;
		pc->bits = (uint8) pack.bits;
		pc->base = col->ndict;
		for (int e = 0; e < col->ndict; e++)
		{
			memcpy(base + sizeof(uint16) * e, &off, sizeof(uint16));
			memcpy(base + entries + off, pk->arena + col->dict[e].at, col->dict[e].len);
			off += col->dict[e].len;
		}
		memcpy(base + sizeof(uint16) * col->ndict, &off, sizeof(uint16));
		pc->step = (int64) (entries + off);	/* where the codes start, from data */
		for (int i = 0; i < n; i++)
			pk->vals[i] = col->codes[i];
		xxl_colpack_encode(&pack, pk->vals, n, (uint8 *) base + entries + off);
		return entries + off + xxl_colpack_bytes(&pack, n);
	}
	else
	{
		uint16		off = 0;
		Size		offsets = sizeof(uint16) * (n + 1);

		pc->enc = XXL_PACKED_VAR;
		for (int i = 0; i < n; i++)
		{
			const char *v = pk->all_vp[c * XXL_PAGE_ROWS + i];

			memcpy(base + sizeof(uint16) * i, &off, sizeof(uint16));
			if (v != NULL)
			{
				memcpy(base + offsets + off, v, pk->all_vl[c * XXL_PAGE_ROWS + i]);
				off += pk->all_vl[c * XXL_PAGE_ROWS + i];
			}
		}
		memcpy(base + sizeof(uint16) * n, &off, sizeof(uint16));
		return offsets + off;
	}
}

/* The rows gathered as a packed page. */
static void
finish_packed(XxlPacker *pk, Page page, uint32 segno)
{
	XxlPageOpaque *op = xxl_page_init_kind(page, XXL_PAGE_PACKED, segno);
	XxlPackedCol *pcs = (XxlPackedCol *) ((char *) page + SizeOfPageHeaderData);
	Size		at = SizeOfPageHeaderData + sizeof(XxlPackedCol) * pk->natts;
	int			n = pk->n;

	op->row_width = (uint16) pk->row_width;
	op->natts = (uint16) pk->natts;
	op->nrows = (uint16) n;
	for (int c = 0; c < pk->natts; c++)
	{
		const char **vp = pk->all_vp + c * XXL_PAGE_ROWS;

		PackCol    *col = &pk->cols[c];
		XxlPackedCol *pc = &pcs[c];
		xxl_colpack pack;
		bool		dict = false;
		Size		bytes = column_bytes(col, NULL, n, &pack, &dict);

		memset(pc, 0, sizeof(*pc));
		pc->width = (uint16) Max(col->width, 0);
		pc->min = col->stats.min;
		pc->max = col->stats.max;
		if (at + bytes > ((PageHeader) page)->pd_special)
			elog(ERROR, "xxl table: packed page overflows");
		if (col->hasnull)
		{
			uint8	   *bits = (uint8 *) page + at;

			pc->nulls = (uint16) at;
			memset(bits, 0, (n + 7) / 8);
			for (int i = 0; i < n; i++)
				if (vp[i] == NULL)
					bits[i / 8] |= 1 << (i % 8);
			at += (n + 7) / 8;
		}
		pc->data = (uint16) at;
		if (col->kind == PACK_VAR)
		{
			at += put_var_column(pk, c, page, at, dict, pc);
			continue;
		}
		if (col->kind == PACK_RAW)
		{
			pc->enc = XXL_PACKED_RAW;
			for (int i = 0; i < n; i++)
			{
				if (vp[i])
					memcpy((char *) page + at + (Size) i * col->width, vp[i], col->width);
				else
					memset((char *) page + at + (Size) i * col->width, 0, col->width);
			}
			at += (Size) n * col->width;
			continue;
		}
		/* NULLs take the base: nothing in their bits */
		for (int i = 0; i < n; i++)
			pk->vals[i] = vp[i] ? read_int(vp[i], col->width) : col->stats.min;
		if (col->stats.n == 0)
			pack.base = 0;
		else if (pack.enc == XXL_COLPACK_DELTA)
			pack.base = pk->vals[0];
		pc->enc = (uint8) pack.enc;
		pc->bits = (uint8) pack.bits;
		pc->base = pack.base;
		pc->step = pack.step;
		xxl_colpack_encode(&pack, pk->vals, n, (uint8 *) page + at);
		at += xxl_colpack_bytes(&pack, n);
	}
	((PageHeader) page)->pd_lower = (LocationIndex) at;
	((PageHeader) page)->pd_upper = (LocationIndex) at;
}

void
xxl_packer_finish(XxlPacker *pk, Page page, uint32 segno)
{
	int			packed = pk->packed_full ? pk->packed_n : pk->n;
	int			plain = pk->plain_full ? pk->plain_n : pk->n;

	Assert(packed == pk->n || plain == pk->n);
	if (packed > plain)
		finish_packed(pk, page, segno);
	else
		finish_plain(pk, page, segno);
	reset(pk);
}
