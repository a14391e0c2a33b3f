# plot_core.gp — draws the core-sorter benchmark (bench/run_core.sh):
# time per phase, I/O volume and peak memory, pgxxl next to STXXL.
#
#   gnuplot -e "datafile='bench/out/core_sort.dat'; outfile='bench/out/core_sort.png'; \
#               title_text='...'; mem=64" bench/plot_core.gp
#
# datafile columns: impl push_s sort_s consume_s total_s read_mib write_mib
# vmhwm_mib engine_peak_mib (NaN when unknown).

set terminal pngcairo size 1500,560 font "sans,11" noenhanced
set output outfile
set datafile missing "NaN"
set style data histograms
set style fill solid 0.85 border -1
set grid ytics lc rgb "#dddddd"
set key below horizontal
set bmargin 6
set offsets 0, 0, graph 0.12, 0
set yrange [0:*]

set multiplot layout 1,3 title title_text font "sans,13"

# 1. Time per phase, stacked; the total above each bar.
set title "time [s] (lower is better)"
set style histogram rowstacked
set boxwidth 0.6
plot datafile using 2:xtic(1) title "push + run formation" lc rgb "#4e79a7", \
     '' using 3 title "sort()" lc rgb "#f28e2b", \
     '' using 4 title "consume (final merge)" lc rgb "#59a14f", \
     '' using 0:5:(sprintf("%.2f s", $5)) with labels offset 0,0.8 notitle

# 2. I/O volume.
set title "spill I/O volume [MiB]"
set style histogram clustered gap 1
set boxwidth 1
plot datafile using 6:xtic(1) title "read" lc rgb "#76b7b2", \
     '' using 7 title "written" lc rgb "#e15759", \
     '' using ($0 - 1.0/6):6:(sprintf("%.0f", $6)) with labels offset 0,0.8 notitle, \
     '' using ($0 + 1.0/6):7:(sprintf("%.0f", $7)) with labels offset 0,0.8 notitle

# 3. Peak memory against the budget.
set title sprintf("peak memory [MiB], budget %d MiB (dashed)", mem)
set arrow 1 from graph 0, first mem to graph 1, first mem nohead dt 2 lw 2 lc rgb "#333333" back
plot datafile using 8:xtic(1) title "process VmHWM" lc rgb "#b07aa1", \
     '' using 9 title "engine budget peak" lc rgb "#edc948", \
     '' using ($0 - 1.0/6):8:(sprintf("%.1f", $8)) with labels offset 0,0.8 notitle, \
     '' using ($0 + 1.0/6):9:(sprintf("%.1f", $9)) with labels offset 0,0.8 notitle
unset arrow 1

unset multiplot
