# plot_sort_sql.gp — the SQL sort benchmark's chart (bench/run_sort_sql.sh):
# time of ORDER BY (no workers, 2 workers) and of pgxxl for consuming the
# sorted rows and for sorting into a new table.
#
# gnuplot -e "datafile='bench/out/sort_sql.dat'; outfile='bench/out/sort_sql.png'; rows='50000000'; mem='64MB'" bench/plot_sort_sql.gp
# Columns: label orderby0_s orderby2_s pgxxl_s

set terminal pngcairo size 900,520 font "sans,10" noenhanced
set output outfile
set title sprintf("xxl.sort / xxl.sort_into vs ORDER BY: %s rows of (bigint, bigint), xxl.memory = work_mem = %s", rows, mem)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left
set grid ytics
set yrange [0:*]
set ylabel "seconds (lower is better)"
plot datafile using 2:xtic(1) title "ORDER BY, no parallel workers" lc rgb "#c0504d", \
	'' using 3 title "ORDER BY, 2 workers" lc rgb "#f79646", \
	'' using 4 title "pgxxl" lc rgb "#4f81bd", \
	'' using 0:2:(sprintf("%.1f", $2)) with labels offset -4,0.7 notitle, \
	'' using 0:3:(sprintf("%.1f", $3)) with labels offset 0,0.7 notitle, \
	'' using 0:4:(sprintf("%.1f", $4)) with labels offset 4,0.7 notitle
