# plots/pipeline.gp - the pipeline schedule of one step, as in NAR21 Fig. 3-4: one row per
# pipeline stage (stage 0 on top), forward passes light blue, backward green, deferred
# weight-gradient passes (zero-bubble) purple where they run, recomputation orange, white
# where the stage waits (the bubble). With few micro-batches each box carries its
# micro-batch number.
# Written by `simtrain SCENARIO.yaml --plot DIR` (src/plot.c).
#
# Data: pipeline.dat rows "x0 x1 stage rgb microbatch" (time in `unit`); kinds lists the
# kinds present (F, B, W, R) for the legend.
if (!exists("datafile")) datafile = 'pipeline.dat'
if (!exists("outbase")) outbase = 'pipeline'
if (!exists("titletext")) titletext = ''
if (!exists("unit")) unit = 'ms'
if (!exists("nstages")) nstages = 1
if (!exists("labels")) labels = 0
if (!exists("stepend")) stepend = 1
if (!exists("kinds")) kinds = 'FB'
kt(k, t) = strstrt(kinds, k) ? t : ''
# With weight-gradient passes (ZB-H1) a green box is a whole backward, or its input-gradient
# pass B alone where the stage deferred its W.
btitle = strstrt(kinds, 'W') ? 'backward (B alone where W is deferred)' : 'backward'

set title sprintf('Pipeline schedule: %s', titletext) noenhanced
set xlabel sprintf('time in the step (%s)', unit)
set ylabel 'pipeline stage'
set xrange [0:stepend]
set yrange [nstages - 0.5:-0.5]
set ytics 1 nomirror
set xtics nomirror
set border 3
set key at screen 0.5, screen 0.015 center bottom horizontal samplen 1.5
set bmargin 5
if (labels) { set style fill solid 1.0 border rgb '#ffffff' } else { set style fill solid 1.0 noborder }

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1200, (220 + 60 * nstages) font 'Helvetica,10'
    } else {
        set terminal svg size 1200, (220 + 60 * nstages) dynamic font 'Helvetica,11'
    }
    set output sprintf('%s.%s', outbase, fmt)
    if (labels) {
        plot datafile using (($1+$2)/2):3:1:2:($3-0.38):($3+0.38):4 with boxxyerror lc rgb variable notitle, \
             '' using (($1+$2)/2):3:(sprintf('%d', $5)) with labels font ',9' notitle, \
             NaN with boxes lc rgb '#77aadd' title kt('F', 'forward'), \
             NaN with boxes lc rgb '#44aa66' title kt('B', btitle), \
             NaN with boxes lc rgb '#aa66cc' title kt('W', 'weight gradients (W)'), \
             NaN with boxes lc rgb '#ee8866' title kt('R', 'recompute')
    } else {
        plot datafile using (($1+$2)/2):3:1:2:($3-0.38):($3+0.38):4 with boxxyerror lc rgb variable notitle, \
             NaN with boxes lc rgb '#77aadd' title kt('F', 'forward'), \
             NaN with boxes lc rgb '#44aa66' title kt('B', btitle), \
             NaN with boxes lc rgb '#aa66cc' title kt('W', 'weight gradients (W)'), \
             NaN with boxes lc rgb '#ee8866' title kt('R', 'recompute')
    }
    unset output
}
