-- demo.sql — what `make demo` shows in a throwaway server.
\pset footer off
CREATE EXTENSION pgxxl;
SELECT xxl.version();
