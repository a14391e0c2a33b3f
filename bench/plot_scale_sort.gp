# plot_scale_sort.gp — the chart of bench/run_scale_sort.sh: time (left) and
# bytes written (right) of one ORDER BY against the budget, XxlSort beside
# PostgreSQL's Sort, log scales.
#
# gnuplot -e "dat='bench/out/scale_sort.dat'; png='bench/out/scale_sort.png'; title='...'" bench/plot_scale_sort.gp
# Columns: budget_mb on_s off_s written_mb passes

set terminal pngcairo size 1200,480 font "sans,9" noenhanced
set output png
set multiplot layout 1,2 title title
set logscale x 2
set grid
set xlabel "budget (MB, log)"
set key top right
set ylabel "seconds"
set yrange [0:*]
set title "time"
plot dat using 1:2 with linespoints lw 2 lc rgb "#4f81bd" title "XxlSort", \
	dat using 1:3 with linespoints lw 2 lc rgb "#c0504d" title "PostgreSQL Sort"
set logscale y 2
set yrange [*:*]
set ylabel "MB written (log)"
set title "XxlSort spill written, merge passes"
plot dat using 1:($4 > 0 ? $4 : 1/0) with linespoints lw 2 lc rgb "#4f81bd" title "MB written", \
	dat using 1:($4 > 0 ? $4 : 1/0):(sprintf("%d", $5)) with labels offset 0,1 notitle
unset multiplot
