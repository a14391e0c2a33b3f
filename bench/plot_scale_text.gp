# plot_scale_text.gp — the chart of bench/run_scale_text.sh: the suffix
# array's time (left axis) and MB written (right axis) against the budget,
# log scales.
#
# gnuplot -e "csv='bench/out/scale_text.csv'; png='...'; title='...'" bench/plot_scale_text.gp
# Columns: mem,mb,ms,peak,read,written,levels,rows

set terminal pngcairo size 900,600 font "sans,10" noenhanced
set output png
set datafile separator ","
set title title
set logscale x 2
set logscale y 10
set logscale y2 10
set grid
set xlabel "budget (MB, log)"
set ylabel "seconds (log)"
set y2label "MB written (log)"
set ytics nomirror
set y2tics
set key top right
plot csv using 2:($3 / 1000) every ::1 with linespoints lw 2 lc rgb "#4f81bd" title "time", \
	csv using 2:($6 > 0 ? $6 / 1048576 : 1/0) every ::1 axes x1y2 with linespoints lw 2 lc rgb "#c0504d" title "written"
