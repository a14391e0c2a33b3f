// duckdb_sort.mjs — DuckDB's side of `make bench-sort-duckdb`
// (bench/run_sort_duckdb.sh): one process per measurement, as PostgreSQL's
// side has one connection per measurement.
//
//   node duckdb_sort.mjs load DB CSV          t (a bigint, b bigint) from the CSV
//                                             PostgreSQL wrote of its own t
//   node duckdb_sort.mjs sort DB MEM THREADS TMP
//        CREATE TABLE s AS SELECT * FROM t ORDER BY a, timed, with
//        memory_limit = MEM, threads = THREADS, spilling to TMP; prints
//        RESULT secs=.. vmhwm_kb=.. base_kb=.. written=.. (or FAILED <error>),
//        then, untimed, ANSWER <count> <sum(b)> <order breaks>
//
// vmhwm_kb is the process's peak resident memory and base_kb what it held
// before the statement (Node and DuckDB loaded, t opened); written is the
// bytes the process dirtied for storage (/proc/self/io write_bytes): the
// new table and the spill.  The package comes from the npm registry,
// installed by bench/run_sort_duckdb.sh under build/duckdb; it is a peer of
// the benchmark only, never a dependency of the extension.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(process.env.DUCKDB_NODE_MODULES + '/');
const { DuckDBInstance } = require('@duckdb/node-api');

function procField(file, re) {
	const m = readFileSync(file, 'utf8').match(re);
	return m ? Number(m[1]) : NaN;
}
const vmhwm = () => procField('/proc/self/status', /VmHWM:\s+(\d+) kB/);
const vmrss = () => procField('/proc/self/status', /VmRSS:\s+(\d+) kB/);
const written = () => procField('/proc/self/io', /write_bytes:\s+(\d+)/);

const [cmd, db, ...rest] = process.argv.slice(2);

if (cmd === 'load') {
	const [csv] = rest;
	const inst = await DuckDBInstance.create(db, { threads: '2' });
	const c = await inst.connect();
	await c.run('DROP TABLE IF EXISTS t');
	await c.run(`CREATE TABLE t AS SELECT * FROM read_csv('${csv}', header = false,
		columns = {'a': 'BIGINT', 'b': 'BIGINT'})`);
	await c.run('CHECKPOINT');
	const r = await c.runAndReadAll('SELECT count(*), sum(b) FROM t');
	console.log('LOADED ' + r.getRows()[0].join(' '));
} else if (cmd === 'sort') {
	const [mem, threads, tmp] = rest;
	const inst = await DuckDBInstance.create(db, {
		threads, memory_limit: mem, temp_directory: tmp, preserve_insertion_order: 'true',
	});
	const c = await inst.connect();
	await c.run('DROP TABLE IF EXISTS s');
	await c.run('CHECKPOINT');
	const base = vmrss(), w0 = written();
	const t0 = process.hrtime.bigint();
	try {
		await c.run('CREATE TABLE s AS SELECT * FROM t ORDER BY a');
	} catch (e) {
		console.log('FAILED ' + String(e.message).split('\n')[0]);
		process.exit(0);
	}
	const secs = Number(process.hrtime.bigint() - t0) / 1e9;
	console.log(`RESULT secs=${secs.toFixed(3)} vmhwm_kb=${vmhwm()} base_kb=${base} written=${written() - w0}`);
	await c.run('CHECKPOINT');
	const r = await c.runAndReadAll(`SELECT count(*), sum(b),
		count(*) FILTER (WHERE p > a) FROM (SELECT a, b, lag(a) OVER (ORDER BY rowid) AS p FROM s)`);
	console.log('ANSWER ' + r.getRows()[0].join(' '));
	await c.run('DROP TABLE s');
	await c.run('CHECKPOINT');
} else {
	console.error('usage: duckdb_sort.mjs load DB CSV | sort DB MEM THREADS TMP');
	process.exit(2);
}
