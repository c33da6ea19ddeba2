# plots/bars.gp - stacked bars: one bar per row of the data file, one stacked segment per
# column (step time by category, memory by category). Used by `--plot DIR` of run
# (breakdown, memory), sweep (sweep_breakdown) and plan (plan_top).
#
#   gnuplot -e "datafile='D/x.dat'; outbase='D/x'; titletext='...'; ylabeltext='...';
#               ncols=N; nrows=R; colors='#rrggbb ...'; hline=80; ymax=90; rotate=0"
#   plots/bars.gp
#
# Data: a header row ("" "name1" "name2" ...), then rows ("label" v1 v2 ...).
# hline >= 0 draws a dashed reference line (e.g. the GPU's memory capacity); bar labels may
# hold \n line breaks (lines = how many lines).
if (!exists("datafile")) datafile = 'breakdown.dat'
if (!exists("outbase")) outbase = 'breakdown'
if (!exists("titletext")) titletext = ''
if (!exists("ylabeltext")) ylabeltext = ''
if (!exists("ncols")) ncols = 1
if (!exists("colors")) colors = '#4477aa'
if (!exists("hline")) hline = -1
if (!exists("rotate")) rotate = 0
if (!exists("ymax")) ymax = 0
if (!exists("lines")) lines = 1

set title titletext noenhanced
set ylabel ylabeltext noenhanced
set style data histogram
set style histogram rowstacked
set style fill solid 0.9 border rgb '#ffffff'
set boxwidth 0.7 relative
set key outside right top vertical noenhanced reverse Left samplen 1.5
set grid ytics lc rgb '#e0e0e0'
if (ymax > 0) { set yrange [0:ymax] } else { set yrange [0:*] }
set xtics nomirror noenhanced
if (rotate) set xtics rotate by -30 left font ',9'
if (lines > 1) set bmargin (1.5 * lines + 1.5); set xtics font ',9'
if (!exists("hunit")) hunit = ''
if (!exists("xlabeltext")) xlabeltext = ''
set xlabel xlabeltext noenhanced

set ytics nomirror
set border 3
if (exists("nrows")) set xrange [-0.6:nrows - 0.4]
if (hline >= 0) set arrow 1 from graph 0, first hline to graph 1, first hline nohead dt 2 lw 1.5 lc rgb '#cc3311' front
if (hline >= 0) set label 1 sprintf('capacity %.1f %s', hline, hunit) at graph 0.01, first hline offset 0, 0.6 tc rgb '#cc3311' front

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 1000,560 font 'Helvetica,11'
    } else {
        set terminal svg size 1000,560 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    plot for [i=2:ncols+1] datafile using i:xtic(1) title columnheader(i) lc rgb word(colors, i-1)
    unset output
}
