-- suffix_doubling.sql — the "pure SQL" baseline of the suffix-array
-- benchmark (bench/run_suffix.sh): prefix doubling (Manber–Myers) in
-- PL/pgSQL.  Round k ranks every suffix by its first 2^k bytes: the new rank
-- is the dense rank of (rank of i, rank of i + h), a self-join on position
-- plus a window sort per round, until all ranks differ.  A suffix running
-- past the end ranks 0 there, below every byte, so a prefix sorts first.
-- Rounds: about log2 of the longest repeated substring.
--
--   SELECT bench_doubling_sa((SELECT b FROM src), 'target');  -- returns the rounds
-- The target gets (rank bigint, pos bigint), 1-based like xxl.suffix_array.
CREATE OR REPLACE FUNCTION bench_doubling_sa(d bytea, target text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  n bigint := length(d);
  h bigint := 1;
  rounds int := 0;
  top bigint;
BEGIN
  DROP TABLE IF EXISTS dbl_r, dbl_next;
  CREATE TEMP TABLE dbl_r AS
    SELECT i AS pos, dense_rank() OVER (ORDER BY get_byte(d, (i - 1)::int)) AS r
    FROM generate_series(1::bigint, n) i;
  ANALYZE dbl_r;
  SELECT coalesce(max(r), 0) INTO top FROM dbl_r;
  WHILE top < n LOOP
    rounds := rounds + 1;
    CREATE TEMP TABLE dbl_next AS
      SELECT a.pos, dense_rank() OVER (ORDER BY a.r, coalesce(b.r, 0)) AS r
      FROM dbl_r a LEFT JOIN dbl_r b ON b.pos = a.pos + h;
    DROP TABLE dbl_r;
    ALTER TABLE dbl_next RENAME TO dbl_r;
    ANALYZE dbl_r;
    SELECT max(r) INTO top FROM dbl_r;
    h := h * 2;
  END LOOP;
  EXECUTE format('CREATE TABLE %I AS SELECT r AS rank, pos FROM dbl_r ORDER BY r', target);
  DROP TABLE dbl_r;
  RETURN rounds;
END $$;
