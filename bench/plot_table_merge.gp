# plot_table_merge.gp — the chart of bench/run_table_merge.sh: each xxl
# table against the heap table (log scale): the one-row INSERTs' time, the
# size before VACUUM's merge, the size and count(*) after it.
#
# gnuplot -e "dat='bench/out/table_merge.dat'; png='bench/out/table_merge.png'; inserts='20000'" bench/plot_table_merge.gp
# Columns: table inserts size_before size_after count_after (each / heap)

set terminal pngcairo size 900,480 font "sans,10" noenhanced
set output png
set title sprintf("%s one-row INSERTs: xxl tables / heap with a primary key (log scale, lower is better)", inserts)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set key top right
set ylabel "xxl / heap"
plot dat using 2:xtic(1) title "INSERTs" lc rgb "#c0504d", \
	'' using 3 title "size before VACUUM" lc rgb "#f79646", \
	'' using 4 title "size after VACUUM" lc rgb "#4f81bd", \
	'' using 5 title "count(*) after" lc rgb "#9bbb59", \
	1 with lines lc rgb "black" notitle
