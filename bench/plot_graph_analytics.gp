# plot_graph_analytics.gp — the analytics benchmark's chart
# (bench/run_graph_analytics.sh): per size and function, the time of the
# peer (SQL or pgRouting), of pgxxl in memory and of pgxxl external.
#
# gnuplot -e "datafile='bench/out/analytics.dat'; outfile='bench/out/analytics.png'" bench/plot_graph_analytics.gp
# Columns: label peer_s xxl_memory_s xxl_external_s

set terminal pngcairo size 1200,520 font "sans,10" noenhanced
set output outfile
set datafile missing "NaN"
set title "pgxxl graph analytics vs SQL / pgRouting: time (s, log scale; lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left
set grid ytics
set logscale y
set ylabel "seconds"
set xtics rotate by -30
plot datafile using 2:xtic(1) title "SQL / pgRouting" lc rgb "#c0504d", \
	'' using 3 title "pgxxl, xxl.memory roomy" lc rgb "#4f81bd", \
	'' using 4 title "pgxxl, external" lc rgb "#9bbb59"
