# plots/memory_timeline.gp - bytes allocated on each pipeline stage's GPU over one step (the
# highest value in each of ~2000 time bins, so no peak is lost), with the GPU's capacity.
# Under 1F1B the activations of the micro-batches in flight rise and fall like a saw.
# Written by `simtrain SCENARIO.yaml --plot DIR` (src/plot.c).
#
# Data: memory_timeline.dat, one block per stage (listed in `stages`), rows "time GiB".
if (!exists("datafile")) datafile = 'memory_timeline.dat'
if (!exists("outbase")) outbase = 'memory_timeline'
if (!exists("titletext")) titletext = ''
if (!exists("unit")) unit = 'ms'
if (!exists("stages")) stages = '0'
if (!exists("capacity")) capacity = 0
if (!exists("stepend")) stepend = 0

set title sprintf('GPU memory over one step: %s', titletext) noenhanced
set xlabel sprintf('time in the step (%s)', unit)
set ylabel 'allocated (GiB)'
set grid xtics ytics lc rgb '#e8e8e8'
set key outside right top
set border 3
set xtics nomirror
set ytics nomirror
stats datafile using 2 nooutput
top = STATS_max > capacity ? STATS_max : capacity
set yrange [0:top * 1.08]
if (stepend > 0) set xrange [0:stepend]
set arrow 1 from graph 0, first capacity to graph 1, first capacity nohead dt 2 lw 1.5 lc rgb '#cc3311' front
set label 1 sprintf('capacity %.1f GiB', capacity) at graph 0.01, first capacity offset 0, 0.6 tc rgb '#cc3311' front

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1000,520 font 'Helvetica,11'
    } else {
        set terminal svg size 1000,520 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    plot for [i=0:words(stages)-1] datafile index i using 1:2 with steps lw 1.5 \
         title sprintf('stage %s', word(stages, i+1))
    unset output
}
