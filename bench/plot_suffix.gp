# plot_suffix.gp — the suffix-array benchmark's chart (bench/run_suffix.sh):
# per run, microseconds per byte (log scale) and peak memory (MiB, log
# scale): libdivsufsort in RAM, xxl.suffix_array_into at n/8 and at a roomy
# budget, the checker, the engine alone, and the PL/pgSQL doubling baseline
# with xxl and divsufsort on the same prefixes.
#
# gnuplot -e "datafile='bench/out/suffix.dat'; outfile='bench/out/suffix.png'; n_mb='100'; mem='12MB'" bench/plot_suffix.gp
# Columns: run us_per_byte peak_mib

set terminal pngcairo size 1400,560 font "sans,10" noenhanced
set output outfile
set datafile missing "NaN"
set multiplot layout 1,2 title sprintf("suffix arrays of %s MiB of real text: xxl.suffix_array_into (xxl.memory = %s = n/8) vs libdivsufsort vs PL/pgSQL doubling", n_mb, mem)

set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.8
set key off
set grid ytics
set logscale y
set xtics rotate by -35 noenhanced
set bmargin 7

set title "time per byte (us, log scale; lower is better)"
set ylabel "us / byte"
plot datafile using ($2 > 0 ? $2 : NaN):xtic(1) lc rgb "#4f81bd", \
	'' using 0:($2 > 0 ? $2 : NaN):(sprintf("%.3g", $2)) with labels offset 0,0.7 notitle

set title "peak memory (MiB, log scale): backend VmHWM / process max RSS"
set ylabel "MiB"
plot datafile using ($3 > 0 ? $3 : NaN):xtic(1) lc rgb "#c0504d", \
	'' using 0:($3 > 0 ? $3 : NaN):(sprintf("%.0f", $3)) with labels offset 0,0.7 notitle

unset multiplot
