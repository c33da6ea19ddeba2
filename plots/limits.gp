# plots/limits.gp - the memory limits of `simtrain memory ... --plot DIR`: the simulated peak
# per GPU against the micro-batch (left) and against the sequence length (right), every
# engine run of the limit searches and a few more for the curve; blue runs fit, red ones do
# not; the GPU's capacity dashed, the limit found marked. Both at the configuration the
# limits were found on (`gpus` GPUs: the scenario's, or its fewest that fit).
#
# Data: limits.dat, two blocks (micro-batch, sequence length); rows "value peak_GiB fits".
if (!exists("datafile")) datafile = 'limits.dat'
if (!exists("outbase")) outbase = 'limits'
if (!exists("titletext")) titletext = ''
if (!exists("capacity")) capacity = 80
if (!exists("mb_limit")) mb_limit = 0
if (!exists("seq_limit")) seq_limit = 0
if (!exists("gpus")) gpus = 1

set grid xtics ytics lc rgb '#e8e8e8'
set key inside top left noenhanced box opaque
set border 3
set xtics nomirror
set ytics nomirror
set ylabel 'simulated peak per GPU (GiB)'
set yrange [0:*]

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1200,520 font 'Helvetica,11'
    } else {
        set terminal svg size 1200,520 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    set multiplot layout 1,2 title sprintf('Memory limits: %s (%d GPU%s)', titletext, gpus, gpus == 1 ? '' : 's') noenhanced
    set xlabel 'micro-batch (sequences)'
    unset arrow
    if (mb_limit > 0) {
        set arrow 1 from first mb_limit, graph 0 to first mb_limit, graph 1 nohead dt 3 lc rgb '#228833'
    }
    plot capacity with lines dt 2 lw 1.5 lc rgb '#cc3311' title sprintf('capacity %.1f GiB', capacity), \
         datafile index 0 using 1:2 with lines lw 1.5 lc rgb '#bbbbbb' notitle, \
         '' index 0 using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 0.9 lc rgb '#4477aa' title 'fits', \
         '' index 0 using 1:($3 == 0 ? $2 : 1/0) with points pt 7 ps 0.9 lc rgb '#cc3311' title 'does not fit', \
         1/0 with lines dt 3 lc rgb '#228833' title sprintf('largest micro-batch %d', mb_limit)
    set xlabel 'sequence length (tokens)'
    unset arrow
    if (seq_limit > 0) {
        set arrow 1 from first seq_limit, graph 0 to first seq_limit, graph 1 nohead dt 3 lc rgb '#228833'
    }
    plot capacity with lines dt 2 lw 1.5 lc rgb '#cc3311' title sprintf('capacity %.1f GiB', capacity), \
         datafile index 1 using 1:2 with lines lw 1.5 lc rgb '#bbbbbb' notitle, \
         '' index 1 using 1:($3 == 1 ? $2 : 1/0) with points pt 7 ps 0.9 lc rgb '#4477aa' title 'fits', \
         '' index 1 using 1:($3 == 0 ? $2 : 1/0) with points pt 7 ps 0.9 lc rgb '#cc3311' title 'does not fit', \
         1/0 with lines dt 3 lc rgb '#228833' title sprintf('longest sequence %d', seq_limit)
    unset multiplot
    unset output
}
