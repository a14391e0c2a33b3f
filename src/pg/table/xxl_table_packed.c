/*
 * xxl_table_packed.c — packed data pages: a page's rows of fixed width
 * stored column by column, integer columns bit-packed by frame of
 * reference or delta (core/xxl_colpack.h), with each integer column's
 * smallest and largest value on the page (xxl_table_storage.h has the
 * layout).
 *
 * The writer (XxlPacker) gathers a page's rows and keeps, row by row,
 * what the page would take packed and what it takes plain; the page is
 * full when neither holds the next row, and it is written in whichever
 * form holds more rows (plain when they tie: nothing to decode).  So
 * packing never costs pages: columns that do not shrink (random floats,
 * uuids) give plain pages.
 *
 * Readers decode a packed page whole into rows of the plain layout
 * (xxl_page_open), so every reader that walks a page's rows reads either
 * kind the same way; fetching one row by TID decodes only that row; the
 * full scan decodes only the columns its plan needs (xxl_packed_column).
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "core/xxl_colpack.h"
#include "pg/table/xxl_table_storage.h"
#include "pg/runtime/runtime.h"

/* Rows wider than this, or of more columns, stay plain. */
#define PACK_MAX_WIDTH 512
#define PACK_MAX_COLS XXL_BYVAL_MAX_COLS

/* Where a column's value lies in a plain row, and how it is packed. */
typedef struct PackCol
{
	int			offset;			/* in the row */
	int			width;
	bool		integer;		/* by value, 1, 2, 4 or 8 bytes: bit-packed */
	bool		hasnull;		/* some row of the page has it NULL */
	xxl_colstats stats;
} PackCol;

struct XxlPacker
{
	int			natts;
	int			bitmap_bytes;
	int			row_width;
	PackCol    *cols;
	xxl_colstats *trial;		/* the stats with the next row, before they are kept */
	char	   *rows;			/* the page's rows so far, plain */
	int			n;
	int			packed_n;		/* rows the packed page holds: n until it is full */
	bool		packed_full;
	int			plain_n;
	bool		plain_full;
	Size		packed_room;
	Size		plain_room;
	int64	   *vals;			/* a column's values, at the page's end */
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

XxlPacker *
xxl_packer_begin(const XxlRowFormat *fmt)
{
	XxlPacker  *pk;
	int			offset;

	if (!xxl_table_compression || fmt->row_width <= 0 || fmt->row_width > PACK_MAX_WIDTH ||
		fmt->natts < 1 || fmt->natts > PACK_MAX_COLS)
		return NULL;
	pk = palloc0(sizeof(XxlPacker));
	pk->natts = fmt->natts;
	pk->bitmap_bytes = fmt->bitmap_bytes;
	pk->row_width = fmt->row_width;
	pk->cols = palloc0(sizeof(PackCol) * fmt->natts);
	pk->trial = palloc(sizeof(xxl_colstats) * fmt->natts);
	pk->rows = palloc((Size) XXL_PAGE_ROWS * fmt->row_width);
	pk->vals = palloc(sizeof(int64) * XXL_PAGE_ROWS);
	offset = fmt->bitmap_bytes;
	for (int c = 0; c < fmt->natts; c++)
	{
		Form_pg_attribute att = TupleDescAttr(fmt->desc, c);
		PackCol    *col = &pk->cols[c];

		col->offset = offset;
		col->width = att->attlen;
		col->integer = att->attbyval && (att->attlen == 1 || att->attlen == 2 ||
										 att->attlen == 4 || att->attlen == 8);
		offset += att->attlen;
	}
	Assert(offset == fmt->row_width || (offset == 0 && fmt->row_width == 1));
	pk->plain_room = xxl_page_max_row(fmt->row_width);
	pk->packed_room = BLCKSZ - SizeOfPageHeaderData - MAXALIGN(sizeof(XxlPageOpaque)) -
		sizeof(XxlPackedCol) * fmt->natts;
	for (int c = 0; c < pk->natts; c++)
		xxl_colstats_reset(&pk->cols[c].stats);
	return pk;
}

void
xxl_packer_end(XxlPacker *pk)
{
	pfree(pk->cols);
	pfree(pk->trial);
	pfree(pk->rows);
	pfree(pk->vals);
	pfree(pk);
}

int
xxl_packer_rows(const XxlPacker *pk)
{
	return pk->n;
}

/* Bytes column c takes on a packed page of rows rows, with stats s and the NULLs it has. */
static Size
column_bytes(const PackCol *col, const xxl_colstats *s, int rows, bool hasnull,
			 xxl_colpack *pack)
{
	Size		bytes = hasnull ? (rows + 7) / 8 : 0;
	xxl_colpack dummy;

	if (!col->integer)
		return bytes + (Size) rows * col->width;
	return bytes + xxl_colpack_choose(s, rows, !hasnull, pack ? pack : &dummy);
}

bool
xxl_packer_add(XxlPacker *pk, const char *row)
{
	if (pk->n >= XXL_PAGE_ROWS)
		return false;
	if (!pk->plain_full && (Size) (pk->n + 1) * pk->row_width > pk->plain_room)
	{
		pk->plain_full = true;
		pk->plain_n = pk->n;
	}
	if (!pk->packed_full)
	{
		Size		bytes = 0;

		for (int c = 0; c < pk->natts; c++)
		{
			PackCol    *col = &pk->cols[c];
			bool		null = row_col_null(row, c);

			pk->trial[c] = col->stats;
			if (col->integer && !null)
				xxl_colstats_add(&pk->trial[c], read_int(row + col->offset, col->width));
			bytes += column_bytes(col, &pk->trial[c], pk->n + 1, col->hasnull || null, NULL);
		}
		if (bytes > pk->packed_room)
		{
			pk->packed_full = true;
			pk->packed_n = pk->n;
		}
		else
			for (int c = 0; c < pk->natts; c++)
			{
				pk->cols[c].stats = pk->trial[c];
				pk->cols[c].hasnull |= row_col_null(row, c);
			}
	}
	if (pk->packed_full && pk->plain_full)
		return false;
	memcpy(pk->rows + (Size) pk->n * pk->row_width, row, pk->row_width);
	pk->n++;
	return true;
}

/* The rows gathered as a plain page. */
static void
finish_plain(XxlPacker *pk, Page page, const XxlRowFormat *fmt, uint32 segno)
{
	xxl_page_init(page, fmt, segno);
	for (int i = 0; i < pk->n; i++)
		if (!xxl_page_add(page, pk->rows + (Size) i * pk->row_width, pk->row_width))
			elog(ERROR, "xxl table: packed page's rows do not fit a plain page");
}

/* The rows gathered as a packed page. */
static void
finish_packed(XxlPacker *pk, Page page, const XxlRowFormat *fmt, uint32 segno)
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
		PackCol    *col = &pk->cols[c];
		XxlPackedCol *pc = &pcs[c];
		xxl_colpack pack;
		Size		bytes = column_bytes(col, &col->stats, n, col->hasnull, &pack);

		memset(pc, 0, sizeof(*pc));
		pc->width = (uint16) col->width;
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
				if (row_col_null(pk->rows + (Size) i * pk->row_width, c))
					bits[i / 8] |= 1 << (i % 8);
			at += (n + 7) / 8;
		}
		pc->data = (uint16) at;
		if (!col->integer)
		{
			pc->enc = XXL_PACKED_RAW;
			for (int i = 0; i < n; i++)
				memcpy((char *) page + at + (Size) i * col->width,
					   pk->rows + (Size) i * pk->row_width + col->offset, col->width);
			at += (Size) n * col->width;
			continue;
		}
		for (int i = 0; i < n; i++)
		{
			const char *row = pk->rows + (Size) i * pk->row_width;

			/* NULLs take the base: nothing in their bits */
			pk->vals[i] = row_col_null(row, c) ? col->stats.min : read_int(row + col->offset, col->width);
		}
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
xxl_packer_finish(XxlPacker *pk, Page page, const XxlRowFormat *fmt, uint32 segno)
{
	int			packed = pk->packed_full ? pk->packed_n : pk->n;
	int			plain = pk->plain_full ? pk->plain_n : pk->n;

	Assert(packed == pk->n || plain == pk->n);
	if (packed > plain)
		finish_packed(pk, page, fmt, segno);
	else
		finish_plain(pk, page, fmt, segno);
	pk->n = 0;
	pk->packed_full = pk->plain_full = false;
	for (int c = 0; c < pk->natts; c++)
	{
		xxl_colstats_reset(&pk->cols[c].stats);
		pk->cols[c].hasnull = false;
	}
}

/* Readers ---------------------------------------------------------------------- */

static inline XxlPackedCol *
packed_col(Page page, int c)
{
	return (XxlPackedCol *) ((char *) page + SizeOfPageHeaderData) + c;
}

static inline void
col_pack(const XxlPackedCol *pc, xxl_colpack *pack)
{
	pack->enc = (xxl_colpack_enc) pc->enc;
	pack->bits = pc->bits;
	pack->base = pc->base;
	pack->step = pc->step;
}

static inline bool
col_null(Page page, const XxlPackedCol *pc, int i)
{
	return pc->nulls != 0 && ((((const uint8 *) page)[pc->nulls + i / 8] >> (i % 8)) & 1);
}

/* The decode buffer of buf, large enough for rows of width. */
static char *
page_buf(XxlPageBuf *buf, int width)
{
	Size		need = (Size) XXL_PAGE_ROWS * Max(width, sizeof(int64));

	if (buf->size < need)
	{
		if (buf->data)
			pfree(buf->data);
		buf->data = MemoryContextAlloc(buf->cxt ? buf->cxt : CurrentMemoryContext, need);
		buf->size = need;
	}
	return buf->data;
}

void
xxl_page_buf_init(XxlPageBuf *buf, MemoryContext cxt)
{
	buf->data = NULL;
	buf->size = 0;
	buf->vals = NULL;
	buf->cxt = cxt;
}

void
xxl_page_buf_free(XxlPageBuf *buf)
{
	if (buf->data)
		pfree(buf->data);
	if (buf->vals)
		pfree(buf->vals);
	buf->data = NULL;
	buf->vals = NULL;
	buf->size = 0;
}

/* Column c's values of every row of a packed page, as integers (packed columns only). */
static int64 *
decode_ints(Page page, XxlPageBuf *buf, const XxlPackedCol *pc, int n)
{
	xxl_colpack pack;

	if (buf->vals == NULL)
		buf->vals = MemoryContextAlloc(buf->cxt ? buf->cxt : CurrentMemoryContext,
									   sizeof(int64) * XXL_PAGE_ROWS);
	col_pack(pc, &pack);
	if (pack.bits == 0 && pack.enc == XXL_COLPACK_FOR)
		for (int i = 0; i < n; i++)
			buf->vals[i] = pack.base;
	else
		xxl_colpack_decode(&pack, (const uint8 *) page + pc->data, n, buf->vals);
	return buf->vals;
}

void
xxl_page_open(Page page, XxlPageBuf *buf, XxlRowRun *run)
{
	XxlPageOpaque *op = XXL_OPAQUE(page);
	int			n = op->nrows,
				width = op->row_width,
				bitmap_bytes = (op->natts + 7) / 8,
				offset = bitmap_bytes;
	char	   *rows;

	if (op->kind != XXL_PAGE_PACKED)
	{
		xxl_page_rows(page, run);
		return;
	}
	rows = page_buf(buf, width);
	for (int i = 0; i < n; i++)
		memset(rows + (Size) i * width, 0, bitmap_bytes);
	for (int c = 0; c < op->natts; c++)
	{
		XxlPackedCol *pc = packed_col(page, c);
		int			w = pc->width;

		if (pc->enc == XXL_PACKED_RAW)
		{
			const char *src = (const char *) page + pc->data;

			for (int i = 0; i < n; i++)
				memcpy(rows + (Size) i * width + offset, src + (Size) i * w, w);
		}
		else
		{
			int64	   *v = decode_ints(page, buf, pc, n);

			/* little-endian: a value's low bytes are its bytes in the row */
			if (w == 8)
				for (int i = 0; i < n; i++)
					memcpy(rows + (Size) i * width + offset, &v[i], 8);
			else
				for (int i = 0; i < n; i++)
					memcpy(rows + (Size) i * width + offset, &v[i], w);
		}
		if (pc->nulls)
			for (int i = 0; i < n; i++)
				if (col_null(page, pc, i))
				{
					char	   *row = rows + (Size) i * width;

					row[c / 8] |= 1 << (c % 8);
					memset(row + offset, 0, w);
				}
		offset += w;
	}
	run->base = rows;
	run->rows = rows;
	run->row_width = width;
	run->end0 = 0;
}

const char *
xxl_page_row_at(Page page, int i, XxlPageBuf *buf, uint32 *len)
{
	XxlPageOpaque *op = XXL_OPAQUE(page);
	int			width = op->row_width,
				offset = (op->natts + 7) / 8;
	char	   *row;

	if (op->kind != XXL_PAGE_PACKED)
		return xxl_page_row(page, i, len);
	row = page_buf(buf, width);
	memset(row, 0, width);
	for (int c = 0; c < op->natts; c++)
	{
		XxlPackedCol *pc = packed_col(page, c);
		int			w = pc->width;

		if (col_null(page, pc, i))
			row[c / 8] |= 1 << (c % 8);
		else if (pc->enc == XXL_PACKED_RAW)
			memcpy(row + offset, (const char *) page + pc->data + (Size) i * w, w);
		else
		{
			xxl_colpack pack;
			int64		v;

			col_pack(pc, &pack);
			v = pack.bits == 0 && pack.enc == XXL_COLPACK_FOR ? pack.base :
				xxl_colpack_decode_one(&pack, (const uint8 *) page + pc->data, i);
			memcpy(row + offset, &v, w);
		}
		offset += w;
	}
	*len = width;
	return row;
}

bool
xxl_packed_columns(Page page, const AttrNumber *cols, int ncols, Datum *values, bool *isnull)
{
	XxlPageOpaque *op = XXL_OPAQUE(page);
	int			n = op->nrows;

	if (op->kind != XXL_PAGE_PACKED)
		return false;
	for (int k = 0; k < ncols; k++)
		if (cols[k] < 1 || cols[k] > op->natts || packed_col(page, cols[k] - 1)->enc == XXL_PACKED_RAW)
			return false;
	for (int k = 0; k < ncols; k++)
	{
		const XxlPackedCol *pc = packed_col(page, cols[k] - 1);
		xxl_colpack pack;
		bool	   *nulls = isnull + (Size) k * XXL_PAGE_ROWS;

		/*
		 * A by-value Datum of 1, 2, 4 or 8 bytes is the value sign-extended
		 * (Int32GetDatum and the like), which is what the unpack gives.
		 */
		StaticAssertStmt(sizeof(Datum) == sizeof(int64), "Datums of 8 bytes");
		col_pack(pc, &pack);
		xxl_colpack_decode(&pack, (const uint8 *) page + pc->data, n,
						   (int64 *) (values + (Size) k * XXL_PAGE_ROWS));
		if (pc->nulls == 0)
			memset(nulls, 0, n);
		else
			for (int i = 0; i < n; i++)
				nulls[i] = col_null(page, pc, i);
	}
	return true;
}
