set terminal pngcairo size 800,500
set output 'jct_cdf.png'
set logscale x
set xlabel 'JCT (hours)'
set ylabel 'fraction of jobs'
set key bottom right
set grid
set title 'JCT CDF'
plot 'jct_cdf.dat' index 0 using 1:2 with lines lw 2 title 'shockwave'
