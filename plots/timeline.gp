# plots/timeline.gp - per-rank timeline of one simulated step: one lane per rank and stream
# group (compute, TP, CP, EP, DP, PP, offload), a box per task (neighbours of the same
# category merged below the picture's resolution), coloured by time category.
# Written by `simtrain SCENARIO.yaml --plot DIR` (src/plot.c).
#
# Data: timeline.dat rows "x0 x1 y0 y1 rgb" (time in `unit`), timeline_lanes.dat rows
# "y label". names / colors: the legend's categories (underscores for spaces).
if (!exists("datafile")) datafile = 'timeline.dat'
if (!exists("lanefile")) lanefile = 'timeline_lanes.dat'
if (!exists("outbase")) outbase = 'timeline'
if (!exists("titletext")) titletext = ''
if (!exists("unit")) unit = 'ms'
if (!exists("nlanes")) nlanes = 1
if (!exists("names")) names = ''
if (!exists("colors")) colors = ''
if (!exists("stepend")) stepend = 1

set title sprintf('Per-rank timeline of one step: %s', titletext) noenhanced
set xlabel sprintf('time in the step (%s)', unit)
set xrange [0:stepend]
set yrange [nlanes - 0.5:-0.5]
set ytics nomirror noenhanced font ',9'
set xtics nomirror
set grid xtics lc rgb '#eeeeee'
set border 3
set key at screen 0.5, screen 0.015 center bottom horizontal noenhanced samplen 1.5
set bmargin 5
set style fill solid 1.0 noborder
under(s) = strstrt(s, '_') ? s[1:strstrt(s, '_') - 1] . ' ' . under(s[strstrt(s, '_') + 1:]) : s

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1200, (200 + 26 * nlanes) font 'Helvetica,10'
    } else {
        set terminal svg size 1200, (200 + 26 * nlanes) dynamic font 'Helvetica,11'
    }
    set output sprintf('%s.%s', outbase, fmt)
    plot datafile using (($1+$2)/2):(($3+$4)/2):1:2:3:4:5 with boxxyerror lc rgb variable notitle, \
         lanefile using (NaN):1:ytic(2) with points notitle, \
         for [i=1:words(names)] NaN with boxes lc rgb word(colors, i) \
             title under(word(names, i))
    unset output
}
