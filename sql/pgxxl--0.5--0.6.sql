/*
 * pgxxl--0.5--0.6.sql — from 0.5 to 0.6: corpora of documents (id, body),
 * LCP arrays, repeats.  xxl.suffix_array(text) and xxl.locate gain the
 * document columns and xxl.suffix_array_into its lcp argument, which
 * changes their signatures: they are dropped and made anew.
 */
\echo Use "ALTER EXTENSION pgxxl UPDATE TO '0.6'" to load this file. \quit

DROP FUNCTION xxl.suffix_array(text);
DROP FUNCTION xxl.suffix_array_into(text, text);
DROP FUNCTION xxl.suffix_array_into(bytea, text);
DROP FUNCTION xxl.locate(text, text, bytea);

-- Text: corpora of documents, LCP, repeats (src/pg/xxl_text_sql.h) ----------
-- corpus: a table name or a query returning one column of type text, varchar
-- or bytea, or two: an integer id and such a body (a corpus of documents);
-- its rows are concatenated in the order they come (give a query an ORDER
-- BY; a table is read in its physical order), as raw bytes, into one text
-- that may exceed 1 GB.  Documents are separated: no common prefix, match
-- or repeat runs from one into the next, and every position also comes as
-- (doc_id, doc_offset).  data: one bytea value.  Positions, offsets and
-- ranks are 1-based.  An untyped literal resolves to the text (corpus) form:
-- write 'abc'::bytea or convert_to('abc', 'UTF8') for a value.  Details in
-- docs/text.md.

CREATE FUNCTION xxl.suffix_array(corpus text)
RETURNS TABLE(rank bigint, pos bigint, doc_id bigint, doc_offset bigint)
AS 'MODULE_PATHNAME', 'xxl_suffix_array_corpus'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array(text) IS
	'the suffix array of a corpus (a table or query of one text or bytea column, or of id and text); doc_id, doc_offset are null without ids';

CREATE FUNCTION xxl.suffix_array_into(corpus text, target text, lcp boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_suffix_array_into_corpus'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array_into(text, text, boolean) IS
	'the suffix array of a corpus into a new table target (rank, pos[, doc_id, doc_offset][, lcp]), in rank order; returns n';

CREATE FUNCTION xxl.suffix_array_into(data bytea, target text, lcp boolean DEFAULT false)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_suffix_array_into_bytea'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.suffix_array_into(bytea, text, boolean) IS
	'the suffix array of a bytea value into a new table target (rank, pos[, lcp]), in rank order; returns n';

CREATE FUNCTION xxl.lcp_into(corpus text, sa text, target text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_lcp_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.lcp_into(text, text, text) IS
	'the LCP array of the suffix array sa (rank, pos, any order) of a corpus into a new table target (rank, pos[, doc_id, doc_offset], lcp); returns n';

CREATE FUNCTION xxl.repeats(corpus text, min_length integer, min_count integer DEFAULT 2)
RETURNS TABLE(doc_id bigint, doc_offset bigint, length bigint, occurrences bigint)
AS 'MODULE_PATHNAME', 'xxl_repeats'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.repeats(text, integer, integer) IS
	'ranges covered by substrings of at least min_length bytes that occur at least min_count times in the corpus, overlapping ones merged, in text order';

CREATE FUNCTION xxl.repeats_into(corpus text, target text, min_length integer, min_count integer DEFAULT 2)
RETURNS bigint
AS 'MODULE_PATHNAME', 'xxl_repeats_into'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.repeats_into(text, text, integer, integer) IS
	'xxl.repeats into a new table target (doc_id, doc_offset, length, occurrences); returns the ranges written';

CREATE FUNCTION xxl.locate(corpus text, sa text, pattern bytea)
RETURNS TABLE(pos bigint, doc_id bigint, doc_offset bigint)
AS 'MODULE_PATHNAME', 'xxl_locate'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION xxl.locate(text, text, bytea) IS
	'every 1-based position (and document, offset) where pattern occurs in the corpus, in suffix order, by binary search over the suffix array table sa';
