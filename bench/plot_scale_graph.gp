# plot_scale_graph.gp — the chart of bench/run_scale_graph.sh: for each graph
# operator, time (left axis) and MB written (right axis) against the budget,
# log scales.
#
# gnuplot -e "csv='bench/out/scale_graph.csv'; png='...'; ops='cc sf ...'; title='...'" bench/plot_scale_graph.gp
# Columns: op,mem,mb,ms,path,peak,written,answer

set terminal pngcairo size 1500,1000 font "sans,9" noenhanced
set output png
set datafile separator ","
set multiplot layout 3,3 title title
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
do for [op in ops] {
	set title op
	plot csv using (strcol(1) eq op ? $3 : 1/0):($4 / 1000) with linespoints lw 2 lc rgb "#4f81bd" title "time", \
		csv using (strcol(1) eq op ? $3 : 1/0):($7 > 0 ? $7 / 1048576 : 1/0) axes x1y2 with linespoints lw 2 lc rgb "#c0504d" title "written"
}
unset multiplot
