set terminal pngcairo size 1200,420
set output 'fig8_summary.png'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top left
set yrange [0:*]
set multiplot layout 1,2 title 'Fig. 8 / paper 5.5: finish-time fairness'
set title 'worst FTF ratio'
set ylabel 'rho'
plot 'fig8_summary.dat' using 2:xtic(1) title 'this simulator', '' using 3 title 'paper'
set title 'unfair jobs (rho > 1)'
set ylabel '%'
plot 'fig8_summary.dat' using 4:xtic(1) title 'this simulator', '' using 5 title 'paper'
unset multiplot
