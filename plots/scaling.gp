# plots/scaling.gp - scaling of a sweep over the GPU count (`simtrain sweep ... --plot DIR`):
# top, throughput against GPUs with the ideal (linear from the smallest configuration);
# bottom, scaling efficiency in percent (strong: same global batch on more GPUs,
# T_base G_base / (T G); weak: batch grown with the GPUs, T_base / T). One line per group
# of points that share every other swept value. Log2 GPU axis.
#
# Data: scaling.dat, one block per group whose first row holds its title, then rows
# "GPUs tokens/s efficiency% ideal_tokens/s".
if (!exists("datafile")) datafile = 'scaling.dat'
if (!exists("outbase")) outbase = 'scaling'
if (!exists("titletext")) titletext = ''
if (!exists("ngroups")) ngroups = 1
if (!exists("scaling")) scaling = 'strong'

set logscale x 2
set grid xtics ytics lc rgb '#e8e8e8'
set key inside top left noenhanced box opaque
set border 3
set xtics nomirror
set ytics nomirror
set xlabel 'GPUs'

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1000,760 font 'Helvetica,11'
    } else {
        set terminal svg size 1000,760 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    set multiplot layout 2,1 title sprintf('Scaling: %s', titletext) noenhanced
    set ylabel 'throughput (tokens/s)'
    set key inside top left
    set yrange [0:*]
    set format y '%.1s%c'
    plot for [i=0:ngroups-1] datafile index i using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc i+1 title columnheader(1), \
         for [i=0:ngroups-1] datafile index i using 1:4 with lines dt 2 lc i+1 title (i == 0 ? 'ideal' : '')
    set ylabel sprintf('%s scaling efficiency (%%)', scaling)
    set yrange [0:119]
    set key inside bottom left
    set format y '%g'
    plot for [i=0:ngroups-1] datafile index i using 1:3 with linespoints lw 2 pt 7 ps 0.8 lc i+1 title columnheader(1), \
         100 with lines dt 2 lc rgb '#999999' title 'ideal'
    unset multiplot
    unset output
}
