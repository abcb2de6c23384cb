set terminal pngcairo size 1200,480
set output 'fig8.png'
set multiplot layout 1,2 title 'Fig. 8: Helios trace, heterogeneous 64-GPU cluster'
set grid
set key bottom right
set ylabel 'fraction of jobs'
set title 'finish-time fairness (Eq. 6)'
set xlabel 'FTF ratio rho'
set logscale x
plot 'fig8_cdf.dat' index 0 using 1:2 with steps lw 2 title 'shockwave'
set title 'job completion time'
set xlabel 'JCT (hours)'
plot 'fig8_cdf.dat' index 1 using 1:2 with steps lw 2 title 'shockwave'
unset multiplot
