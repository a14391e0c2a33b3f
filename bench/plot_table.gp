# plot_table.gp — the table access method benchmark's chart
# (bench/run_table.sh): time per step, heap table against xxl table.
#
# gnuplot -e "datafile='bench/out/table.dat'; outfile='bench/out/table.png'; rows='50000000'" bench/plot_table.gp
# Columns: step heap_s xxl_s

set terminal pngcairo size 1300,600 font "sans,10" noenhanced
set rmargin 18
set bmargin 9
set output outfile
set title sprintf("xxl table vs heap table, %s rows of (bigint, bigint); seconds, log scale, lower is better", rows)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left
set grid ytics
set logscale y
set xtics rotate by -25
set ylabel "seconds"
plot datafile using 2:xtic(1) title "heap" lc rgb "#c0504d", \
	'' using 3 title "xxl" lc rgb "#4f81bd"
