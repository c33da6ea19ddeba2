# plots/pareto.gp - what `simtrain plan` simulated: every candidate the engine ran, its
# simulated step time against its simulated peak memory per GPU (blue: fits; red crosses: the
# engine found it out of memory), the Pareto front of those that fit (green: no other is both
# faster and smaller), and the GPU's memory capacity (dashed). Lower left is better.
#
# Data: plan_pareto.dat, three blocks (fits, out of memory, front in memory order); rows
# "step_s GiB".
if (!exists("datafile")) datafile = 'plan_pareto.dat'
if (!exists("outbase")) outbase = 'plan_pareto'
if (!exists("titletext")) titletext = ''
if (!exists("capacity")) capacity = 80
if (!exists("nsim")) nsim = 0
if (!exists("nfront")) nfront = 0
if (!exists("noom")) noom = 0

set title sprintf('Simulated candidates: %s (%d simulated, %d on the Pareto front)', titletext, nsim, nfront) noenhanced
set xlabel 'simulated step time (s)'
set ylabel 'simulated peak memory per GPU (GiB)'
set grid xtics ytics lc rgb '#e8e8e8'
set key at screen 0.5, screen 0.015 center bottom horizontal
set bmargin 5
set border 3
set xtics nomirror
set ytics nomirror
set yrange [0:capacity * 1.25]
set arrow 1 from graph 0, first capacity to graph 1, first capacity nohead dt 2 lw 1.5 lc rgb '#cc3311' front
set label 1 sprintf('capacity %.1f GiB', capacity) at graph 0.01, first capacity offset 0, 0.6 tc rgb '#cc3311' front

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1000,640 font 'Helvetica,11'
    } else {
        set terminal svg size 1000,640 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    if (noom > 0) {
        plot datafile index 0 using 1:2 with points pt 7 ps 0.9 lc rgb '#4477aa' title 'fits (simulated)', \
             '' index 1 using 1:2 with points pt 2 ps 1.0 lc rgb '#cc3311' title 'out of memory (simulated)', \
             '' index 2 using 1:2 with linespoints lw 2 pt 6 ps 1.6 lc rgb '#228833' title 'Pareto front'
    } else {
        plot datafile index 0 using 1:2 with points pt 7 ps 0.9 lc rgb '#4477aa' title 'fits (simulated)', \
             '' index 2 using 1:2 with linespoints lw 2 pt 6 ps 1.6 lc rgb '#228833' title 'Pareto front'
    }
    unset output
}
