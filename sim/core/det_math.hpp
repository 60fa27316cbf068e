#pragma once
/// Elementary functions computed with + - * / only, so that every x86-64 CPU gives the same bits.
/// glibc's libm picks FMA/AVX2 code paths at run time (ifunc): exp, log, log1p and cos then
/// differ in the last bit for about 1 argument in 1,000 between CPUs with and without FMA
/// (measured: GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F). Results of a seeded run must
/// not depend on the CPU, so the random deviates, the jitter factors and the training loss use
/// these instead. Accuracy is within a few ulp (tests/unit/det_math_test.cpp), not correctly
/// rounded. The compiler must not contract a*b+c into an FMA: without -march (the default
/// x86-64 baseline has no FMA) and with -std=c++20 (-ffp-contract=off) it does not.
namespace sgdsim::detmath {

/// e^x; +inf above 709.78, 0 below -745.13, NaN for NaN.
double exp(double x);
/// Natural logarithm; -inf at 0, NaN below 0.
double log(double x);
/// log(1 + x), accurate for small x (Goldberg's rewrite through log).
double log1p(double x);
/// cos(2 pi u): the argument in turns, reduced exactly (Box-Muller's angle).
double cos_turns(double u);
/// x^n for an integer n >= 0 by repeated squaring.
double pow_int(double x, long n);

}  // namespace sgdsim::detmath
