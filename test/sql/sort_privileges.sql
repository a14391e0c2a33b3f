-- sort_privileges.sql — who may call xxl.sort: EXECUTE on the function
-- and SELECT on the source.  Only the extension's owner changes the
-- function's rights, so this runs in the superuser pass only
-- (scripts/test.sh, SUPERUSER_ONLY).
\i test/include/begin.sql
CREATE TABLE ss (k int);
INSERT INTO ss SELECT g FROM generate_series(1, 100) g;
-- privileges: EXECUTE on the function, SELECT on the source
SELECT pg_temp.xt_role('xxl_scan_user');
GRANT SELECT ON ss TO xxl_scan_user;
REVOKE EXECUTE ON FUNCTION xxl.sort(anyelement, text) FROM PUBLIC;
SET ROLE xxl_scan_user;
SELECT count(*) FROM xxl.sort(NULL::ss, 'k');
RESET ROLE;
GRANT EXECUTE ON FUNCTION xxl.sort(anyelement, text) TO PUBLIC;
REVOKE SELECT ON ss FROM xxl_scan_user;
SET ROLE xxl_scan_user;
SELECT count(*) FROM xxl.sort(NULL::ss, 'k');
RESET ROLE;
SELECT pg_temp.xt_drop_role('xxl_scan_user');
DROP TABLE ss;
\i test/include/end.sql
