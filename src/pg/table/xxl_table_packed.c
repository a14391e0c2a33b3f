/*
 * xxl_table_packed.c — reading packed data pages (xxl_table_storage.h has
 * the layout, xxl_table_packer.c writes them).
 *
 * Readers that walk a page's rows decode a packed page whole into rows of
 * the plain layout (xxl_page_open): fixed rows back to back, variable rows
 * downwards from the top of the buffer with a 16-bit offset each, as on a
 * plain page, so every such reader reads either kind the same way.
 * Fetching one row by TID decodes only that row (xxl_page_row_at); the full
 * and aggregate scans take bit-packed integer columns straight into their
 * arrays of values (xxl_packed_columns).
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "core/xxl_colpack.h"
#include "pg/table/xxl_table_storage.h"

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

static inline uint16
u16_at(const char *p)
{
	uint16		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Value i of a column that is not bit-packed, and its length: a fixed
 * column's bytes, a variable one's from its offsets or its dictionary
 * (the code decoded).
 */
static const char *
other_value(Page page, const XxlPackedCol *pc, int i, int nrows, uint32 *len)
{
	const char *data = (const char *) page + pc->data;

	switch (pc->enc)
	{
		case XXL_PACKED_RAW:
			*len = pc->width;
			return data + (Size) i * pc->width;
		case XXL_PACKED_VAR:
			{
				Size		values = sizeof(uint16) * (nrows + 1);
				uint16		at = u16_at(data + sizeof(uint16) * i);

				*len = u16_at(data + sizeof(uint16) * (i + 1)) - at;
				return data + values + at;
			}
		case XXL_PACKED_DICT:
			{
				xxl_colpack codes = {XXL_COLPACK_FOR, pc->bits, 0, 0};
				int			e = (int) xxl_colpack_decode_one(&codes, (const uint8 *) data + pc->step, i);
				Size		entries = sizeof(uint16) * (pc->base + 1);
				uint16		at = u16_at(data + sizeof(uint16) * e);

				*len = u16_at(data + sizeof(uint16) * (e + 1)) - at;
				return data + entries + at;
			}
	}
	elog(ERROR, "xxl table: a packed column of unknown encoding %d", pc->enc);
	return NULL;
}

/* The decode buffer of buf, at least need bytes. */
static char *
page_buf(XxlPageBuf *buf, Size need)
{
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
	buf->nvals = 0;
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
	buf->nvals = 0;
}

/* Every bit-packed column of a packed page decoded: column c's at vals[c * XXL_PAGE_ROWS]. */
static int64 *
decode_ints(Page page, XxlPageBuf *buf, int natts, int n)
{
	if (buf->nvals < natts)
	{
		if (buf->vals)
			pfree(buf->vals);
		buf->vals = MemoryContextAlloc(buf->cxt ? buf->cxt : CurrentMemoryContext,
									   sizeof(int64) * XXL_PAGE_ROWS * natts);
		buf->nvals = natts;
	}
	for (int c = 0; c < natts; c++)
	{
		XxlPackedCol *pc = packed_col(page, c);
		xxl_colpack pack;

		if (!xxl_packed_is_int(pc))
			continue;
		col_pack(pc, &pack);
		xxl_colpack_decode(&pack, (const uint8 *) page + pc->data, n,
						   buf->vals + (Size) c * XXL_PAGE_ROWS);
	}
	return buf->vals;
}

/*
 * Row i's bytes into out (at least its length): the NULL bitmap, then
 * each column's value; fixed rows keep a NULL's zeroed place, variable
 * rows give it none.  Its length.
 */
static uint32
form_row(Page page, int i, const int64 *vals, char *out)
{
	XxlPageOpaque *op = XXL_OPAQUE(page);
	bool		fixed = op->row_width > 0;
	int			bitmap_bytes = (op->natts + 7) / 8;
	char	   *p = out + bitmap_bytes;

	memset(out, 0, bitmap_bytes);
	for (int c = 0; c < op->natts; c++)
	{
		XxlPackedCol *pc = packed_col(page, c);
		const char *v;
		uint32		len;
		int64		x;

		if (col_null(page, pc, i))
		{
			out[c / 8] |= 1 << (c % 8);
			if (fixed)
			{
				memset(p, 0, pc->width);
				p += pc->width;
			}
			continue;
		}
		if (xxl_packed_is_int(pc))
		{
			if (vals)
				x = vals[(Size) c * XXL_PAGE_ROWS + i];
			else
			{
				xxl_colpack pack;

				col_pack(pc, &pack);
				x = xxl_colpack_decode_one(&pack, (const uint8 *) page + pc->data, i);
			}
			/* little-endian: a value's low bytes are its bytes in the row */
			memcpy(p, &x, pc->width);
			p += pc->width;
			continue;
		}
		v = other_value(page, pc, i, op->nrows, &len);
		memcpy(p, v, len);
		p += len;
	}
	return (uint32) (p - out);
}

void
xxl_page_open(Page page, XxlPageBuf *buf, XxlRowRun *run)
{
	XxlPageOpaque *op = XXL_OPAQUE(page);
	int			n = op->nrows,
				width = op->row_width;
	const int64 *vals;
	char	   *rows;

	if (op->kind != XXL_PAGE_PACKED)
	{
		xxl_page_rows(page, run);
		return;
	}
	vals = decode_ints(page, buf, op->natts, n);
	if (width > 0)
	{
		/* fixed rows, back to back, filled a column at a time */
		int			bitmap_bytes = (op->natts + 7) / 8,
					offset = bitmap_bytes;

		rows = page_buf(buf, (Size) XXL_PAGE_ROWS * width);
		for (int i = 0; i < n; i++)
			memset(rows + (Size) i * width, 0, bitmap_bytes);
		for (int c = 0; c < op->natts; c++)
		{
			XxlPackedCol *pc = packed_col(page, c);
			int			w = pc->width;
			char	   *dst = rows + offset;

			if (xxl_packed_is_int(pc))
			{
				const int64 *v = vals + (Size) c * XXL_PAGE_ROWS;

				/* little-endian: a value's low bytes are its bytes in the row */
				if (w == 8)
					for (int i = 0; i < n; i++)
						memcpy(dst + (Size) i * width, &v[i], 8);
				else
					for (int i = 0; i < n; i++)
						memcpy(dst + (Size) i * width, &v[i], w);
			}
			else
			{
				const char *src = (const char *) page + pc->data;

				for (int i = 0; i < n; i++)
					memcpy(dst + (Size) i * width, src + (Size) i * w, w);
			}
			if (pc->nulls)
				for (int i = 0; i < n; i++)
					if (col_null(page, pc, i))
					{
						rows[(Size) i * width + c / 8] |= 1 << (c % 8);
						memset(dst + (Size) i * width, 0, w);
					}
			offset += w;
		}
		run->base = rows;
		run->rows = rows;
		run->row_width = width;
		run->end0 = 0;
	}
	else
	{
		/*
		 * Variable rows as a plain page lays them out: a 16-bit offset per
		 * row from the buffer's start, row 0 ending at the top, each next
		 * row below the one before (the writer kept the whole within 16 bits).
		 */
		char		row[BLCKSZ];
		uint32		top = XXL_PACKED_DECODED_MAX,
					at = top;

		rows = page_buf(buf, XXL_PACKED_DECODED_MAX);
		for (int i = 0; i < n; i++)
		{
			uint32		len = form_row(page, i, vals, row);
			uint16		off;

			if (at < len || at - len < sizeof(uint16) * n)
				elog(ERROR, "xxl table: packed page's rows exceed their decoded size");
			at -= len;
			memcpy(rows + at, row, len);
			off = (uint16) at;
			memcpy(rows + sizeof(uint16) * i, &off, sizeof(uint16));
		}
		run->base = rows;
		run->rows = rows;
		run->row_width = 0;
		run->end0 = (uint16) top;
	}
}

const char *
xxl_page_row_at(Page page, int i, XxlPageBuf *buf, uint32 *len)
{
	XxlPageOpaque *op = XXL_OPAQUE(page);
	char	   *row;

	if (op->kind != XXL_PAGE_PACKED)
		return xxl_page_row(page, i, len);
	/* (a variable row is smaller than the page it came from) */
	row = page_buf(buf, op->row_width > 0 ? op->row_width : BLCKSZ);
	*len = form_row(page, i, NULL, row);
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
		if (cols[k] < 1 || cols[k] > op->natts || !xxl_packed_is_int(packed_col(page, cols[k] - 1)))
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
