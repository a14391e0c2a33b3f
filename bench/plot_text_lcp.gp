# plot_text_lcp.gp — the text benchmark's chart (bench/run_text_lcp.sh): per
# corpus, the time of xxl at xxl.memory = n/8 over its in-RAM peer: the
# suffix array against divsufsort64, the suffix array with LCP against
# divsufsort + Kasai.  The line at 1 is parity, the dashed ones the
# issue's targets (3x and 5x).
#
# gnuplot -e "datafile='bench/out/text_lcp.dat'; outfile='bench/out/text_lcp.png'; n_mb='100'; mem='12MB'" bench/plot_text_lcp.gp
# Columns: corpus sa_ratio lcp_ratio

set terminal pngcairo size 900,520 font "sans,10" noenhanced
set output outfile
set title sprintf("%s MiB per corpus, xxl.memory = %s (n/8): time over the in-RAM peer (lower is better)", n_mb, mem)
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set ylabel "xxl time / peer time"
set key outside bottom center horizontal
plot datafile using 2:xtic(1) title "suffix array / divsufsort64" lc rgb "#4f81bd", \
	'' using 3 title "suffix array + LCP / divsufsort + Kasai" lc rgb "#c0504d", \
	1 with lines lc rgb "black" notitle, \
	3 with lines dt 2 lc rgb "#4f81bd" title "target 3x", \
	5 with lines dt 2 lc rgb "#c0504d" title "target 5x"
