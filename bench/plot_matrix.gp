# plot_matrix.gp — the chart of bench/run_matrix.sh: seconds of each
# product, pgxxl at each budget and SQL's join + GROUP BY, log scale.
#
# gnuplot -e "dat='bench/out/matrix.dat'; png='bench/out/matrix.png'" bench/plot_matrix.gp
# Columns: "who case mem" secs

set terminal pngcairo size 900,480 font "sans,9" noenhanced
set output png
set title "Matrix products: seconds (lower is better)"
set style fill solid 0.85 border -1
set boxwidth 0.7
set grid ytics
set logscale y
set ylabel "seconds"
set xtics rotate by -45 font "sans,8"
plot dat using 0:2:xtic(1) with boxes lc rgb "#4f81bd" notitle
