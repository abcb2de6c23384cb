set terminal pngcairo size 1000,700
set output 'timeline-shockwave-helios-1.png'
set xlabel 'time (hours)'
set ylabel 'job (submission order)'
set key outside right
set title 'GPU type and count per job over time (shockwave, helios-1; point size = GPUs)'
plot 'timeline-shockwave-helios-1.dat' index 0 using 1:2:(0.25+0.12*sqrt($3)) with points pt 5 ps variable title 'aws', 'timeline-shockwave-helios-1.dat' index 1 using 1:2:(0.25+0.12*sqrt($3)) with points pt 5 ps variable title 'dgx-ext', 'timeline-shockwave-helios-1.dat' index 2 using 1:2:(0.25+0.12*sqrt($3)) with points pt 5 ps variable title 'rtx'
