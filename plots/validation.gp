# plots/validation.gp - predicted against measured for one metric of `simtrain validate`:
# log-log axes, the y = x line and a +-10 % band (the accuracy target of DESIGN.md is
# median <= 5 %, max <= 15 % on step time).
#
# simtrain validate RUNS.csv --plot DIR runs, per metric:
#   gnuplot -e "datafile='DIR/validation_M.dat'; outfile='DIR/validation_M.svg'; metric='M'" \
#           plots/validation.gp
# Data columns: measured predicted error_pct id. Writes the SVG named by outfile and a PNG
# next to it (same name, .png).
if (!exists("datafile")) datafile = 'validation_step_time_s.dat'
if (!exists("outfile")) outfile = 'validation_step_time_s.svg'
if (!exists("metric")) metric = 'step_time_s'

outbase = strlen(outfile) > 4 && outfile[strlen(outfile)-3:] eq '.svg' ? outfile[1:strlen(outfile)-4] : outfile
set title sprintf('simtrain validate: %s, predicted against measured', metric) noenhanced
set xlabel sprintf('measured %s', metric) noenhanced
set ylabel sprintf('predicted %s', metric) noenhanced
set logscale xy
set grid xtics ytics mxtics mytics lc rgb '#e0e0e0'
set key top left box opaque

stats datafile using 1:2 nooutput
lo = (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) / 1.25
hi = (STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y) * 1.25
set xrange [lo:hi]
set yrange [lo:hi]
set samples 200

do for [fmt in 'png svg'] {
    if (fmt eq 'png') {
        set terminal pngcairo size 720,640 font 'Helvetica,11'
    } else {
        set terminal svg size 720,640 dynamic font 'Helvetica,12'
    }
    set output sprintf('%s.%s', outbase, fmt)
    plot '+' using 1:(0.9 * $1):(1.1 * $1) with filledcurves lc rgb '#d6e4f0' title '+-10 %', \
         x with lines dt 2 lc rgb '#404040' title 'y = x', \
         datafile using 1:2 with points pt 7 ps 0.7 lc rgb '#1f5fa0' title sprintf('runs (%d)', STATS_records)
    unset output
}
