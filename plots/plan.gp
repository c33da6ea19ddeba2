# plots/plan.gp - what `simtrain plan` searched: every layout that fits by the closed-form
# estimate (grey: estimated step time against estimated peak memory), the ones the engine
# simulated (blue, simulated figures) and the final ranking (red, numbered), under the
# GPU's memory capacity (dashed). Lower left is better: faster and with more headroom.
#
# Data: plan.dat, three blocks: estimates, simulated, final; rows "step_s GiB kind label".
if (!exists("datafile")) datafile = 'plan.dat'
if (!exists("outbase")) outbase = 'plan'
if (!exists("titletext")) titletext = ''
if (!exists("capacity")) capacity = 80
if (!exists("nfit")) nfit = 0

set title sprintf('Layouts that fit: %s (%d by estimate)', titletext, nfit) noenhanced
set xlabel 'step time (s)'
set ylabel 'peak memory per GPU (GiB)'
set logscale x
set grid xtics ytics mxtics lc rgb '#e8e8e8'
set key at screen 0.5, screen 0.015 center bottom horizontal
set bmargin 5
set border 3
set xtics nomirror
set ytics nomirror
set yrange [0:capacity * 1.1]
set arrow 1 from graph 0, first capacity to graph 1, first capacity nohead dt 2 lw 1.5 lc rgb '#cc3311' front
set label 1 sprintf('capacity %.1f GiB', capacity) at graph 0.01, first capacity offset 0, 0.6 tc rgb '#cc3311' front

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1000,640 font 'Helvetica,11'
    } else {
        set terminal svg size 1000,640 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    plot datafile index 0 using 1:2 with points pt 7 ps 0.35 lc rgb '#bbbbbb' title 'fits (estimate)', \
         '' index 1 using 1:2 with points pt 7 ps 0.8 lc rgb '#4477aa' title 'simulated', \
         '' index 2 using 1:2 with points pt 9 ps 1.6 lc rgb '#cc3311' title 'best (simulated)', \
         '' index 2 using 1:2:4 with labels left offset 0.8, 0.5 font ',10' notitle
    unset output
}
