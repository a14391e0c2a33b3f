# plot_sort_plans.gp — the chart of bench/run_sort_plans.sh: each sorting
# query's time with PostgreSQL's Sort (no workers, 2 workers) and with
# xxl.sort_in_plans (XxlSort, no workers and 2).
#
# gnuplot -e "datafile='bench/out/sort_plans.dat'; outfile='bench/out/sort_plans.png'; rows='50000000'; mem='64MB'" bench/plot_sort_plans.gp
# Columns: query sort0_s sort2_s xxl0_s xxl2_s

set terminal pngcairo size 1000,520 font "sans,10" noenhanced
set output outfile
set title sprintf("Sorting queries, xxl.sort_in_plans on vs off: %s rows of (bigint, bigint), work_mem = xxl.memory = %s", rows, mem)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left
set grid ytics
set yrange [0:*]
set ylabel "seconds (lower is better)"
plot datafile using 2:xtic(1) title "Sort, no parallel workers" lc rgb "#c0504d", \
	'' using 3 title "Sort, 2 workers" lc rgb "#f79646", \
	'' using 4 title "XxlSort, no workers" lc rgb "#4f81bd", \
	'' using 5 title "XxlSort, 2 workers" lc rgb "#8db3e2", \
	'' using 0:2:(sprintf("%.1f", $2)) with labels offset -5,0.7 notitle, \
	'' using 0:3:(sprintf("%.1f", $3)) with labels offset -1.7,0.7 notitle, \
	'' using 0:4:(sprintf("%.1f", $4)) with labels offset 1.7,0.7 notitle, \
	'' using 0:5:(sprintf("%.1f", $5)) with labels offset 5,0.7 notitle
