# plot_sort_duckdb.gp — the chart of bench/run_sort_duckdb.sh: seconds to
# sort the rows into a new table at each budget, DuckDB against CTAS through
# XxlSort and xxl.sort_into (DuckDB 0 s: it failed at that budget).
#
# gnuplot -e "datafile='bench/out/sort_duckdb.dat'; outfile='bench/out/sort_duckdb.png'; rows='50000000'; threads='2'" bench/plot_sort_duckdb.gp
# Columns: budget duckdb_s ctas_s sort_into_s

set terminal pngcairo size 900,520 font "sans,10" noenhanced
set output outfile
set title sprintf("Sorting %s rows of (bigint, bigint) into a new table, %s threads: pgxxl vs DuckDB", rows, threads)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top right
set grid ytics
set yrange [0:*]
set xlabel "memory budget (DuckDB memory_limit; work_mem = xxl.memory)"
set ylabel "seconds (lower is better)"
plot datafile using 2:xtic(1) title "DuckDB CREATE TABLE AS ... ORDER BY" lc rgb "#c0504d", \
	'' using 3 title "CREATE TABLE AS ... ORDER BY (XxlSort)" lc rgb "#9bbb59", \
	'' using 4 title "xxl.sort_into" lc rgb "#4f81bd", \
	'' using 0:2:($2 > 0 ? sprintf("%.1f", $2) : "failed") with labels offset -4,0.7 notitle, \
	'' using 0:3:(sprintf("%.1f", $3)) with labels offset 0,0.7 notitle, \
	'' using 0:4:(sprintf("%.1f", $4)) with labels offset 4,0.7 notitle
