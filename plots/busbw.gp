# plots/busbw.gp - bus bandwidth against message size for `simtrain collective --plot DIR`:
# log2 x axis (bytes, nccl-tests sizes), linear y axis (GB/s, nccl-tests busbw definition).
#
# simtrain collective --hardware H --op OP --gpus N --plot DIR runs
#   gnuplot -e "datafile='DIR/busbw.dat'; outbase='DIR/busbw'; titletext='...'" plots/busbw.gp
# and gets DIR/busbw.png and DIR/busbw.svg. Data columns: bytes busbw_GBps.
if (!exists("datafile")) datafile = 'busbw.dat'
if (!exists("outbase")) outbase = 'busbw'
if (!exists("titletext")) titletext = 'simtrain collective'

set title sprintf('simtrain collective: %s, bus bandwidth', titletext) noenhanced
set xlabel 'message size (bytes)'
set ylabel 'busbw (GB/s)'
set logscale x 2
set format x '%.0b%B'
set xtics 4
set grid xtics ytics lc rgb '#e0e0e0'
set key top left box opaque
set yrange [0:*]

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 900,560 font 'Helvetica,11'
    } else {
        set terminal svg size 900,560 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    plot datafile using 1:2 with linespoints pt 7 ps 0.6 lw 1.5 lc rgb '#1f5fa0' title 'model busbw'
    unset output
}
