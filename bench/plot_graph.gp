# plot_graph.gp — the graph benchmark's chart (bench/run_graph.sh): per
# function and graph size, time and peak backend memory of pgRouting, of
# pgxxl at xxl.memory and of pgxxl on its fully external path; the memory
# panel marks pgxxl's limit (xxl.memory + 32 MB).  Missing bars: not run
# (pgRouting on the big graph without BIG_PGR=1, or no pgRouting function).
#
# gnuplot -e "datafile='bench/out/graph.dat'; outfile='bench/out/graph.png'; mem='256MB'" bench/plot_graph.gp
# Columns: label pgr_s xxl_s xxl_ext_s pgr_mb xxl_mb xxl_ext_mb limit_mb

set terminal pngcairo size 1400,560 font "sans,10" noenhanced
set output outfile
set datafile missing "NaN"
set multiplot layout 1,2 title sprintf("pgxxl vs pgRouting 3.4: random graphs (nodes/edges), xxl.memory = %s", mem)

set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left
set grid ytics
set logscale y
set xtics rotate by -30

set title "time (s, log scale; lower is better)"
set ylabel "seconds"
plot datafile using 2:xtic(1) title "pgRouting" lc rgb "#c0504d", \
	'' using 3 title "pgxxl" lc rgb "#4f81bd", \
	'' using 4 title "pgxxl, fully external path" lc rgb "#9bbb59"

set title "peak backend memory (VmHWM, MB, log scale)"
set ylabel "MB"
plot datafile using 5:xtic(1) title "pgRouting" lc rgb "#c0504d", \
	'' using 6 title "pgxxl" lc rgb "#4f81bd", \
	'' using 7 title "pgxxl, fully external path" lc rgb "#9bbb59", \
	'' using ($0):8 with points pt 7 ps 1.2 lc rgb "black" title "limit of the pgxxl bar: xxl.memory + 32 MB"

unset multiplot
