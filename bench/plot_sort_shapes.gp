# plot_sort_shapes.gp — the chart of bench/run_sort_shapes.sh: for each
# database, budget and row count, each key shape's time with
# xxl.sort_in_plans on divided by its time with it off (PostgreSQL's Sort);
# the target line at 0.7, break-even at 1.
#
# gnuplot -e "dat='bench/out/sort_shapes.dat'; png='bench/out/sort_shapes.png'" bench/plot_sort_shapes.gp
# Columns: "db mem rows" "shape" on_s off_s ratio

set terminal pngcairo size 1200,560 font "sans,9" noenhanced
set output png
set title "ORDER BY shapes: time with xxl.sort_in_plans on / off (lower is better)"
set style fill solid 0.85 border -1
set boxwidth 0.8
set grid ytics
set yrange [0:*]
set ylabel "on / off"
set xtics rotate by -60 font "sans,8"
set key top left
plot dat using 0:5:xtic(sprintf("%s | %s", stringcolumn(1), stringcolumn(2))) with boxes lc rgb "#4f81bd" title "on / off", \
	0.7 with lines lc rgb "#9bbb59" dt 2 title "target 0.7", \
	1.0 with lines lc rgb "#c0504d" title "break-even"
