/* Helpers shared by the tuners of roboest/training.h (kfd_tune.c, ukf_tune.c). */
#ifndef ROBOEST_TUNE_INTERNAL_H
#define ROBOEST_TUNE_INTERNAL_H

/* x rounded to 3 significant digits, as the nearest double to the 3-digit decimal (so it prints short). */
double rb_tune_round3(double x);

#endif
