/* .Call entry points for random features and counter-based normal draws. */
#include <math.h>
#include "glue.h"
#include "rff.h"
#include "rng.h"

SEXP C_rff_draw(SEXP spec, SEXP m_, SEXP d_, SEXP seed)
{
  const kernel k = glue_kernel(spec);
  const int m = Rf_asInteger(m_), d = Rf_asInteger(d_);
  SEXP omega = PROTECT(Rf_allocMatrix(REALSXP, m, d));
  SEXP phase = PROTECT(Rf_allocVector(REALSXP, m));
  rff_draw(&k, m, d, glue_seed(seed), REAL(omega), REAL(phase));
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, omega);
  SET_VECTOR_ELT(out, 1, phase);
  UNPROTECT(3);
  return out;
}

SEXP C_rff_draw_prior(SEXP spec, SEXP m_, SEXP d_, SEXP seed, SEXP threads)
{
  const kernel k = glue_kernel(spec);
  const int m = Rf_asInteger(m_), d = Rf_asInteger(d_);
  SEXP omega = PROTECT(Rf_allocMatrix(REALSXP, m, d));
  SEXP phase = PROTECT(Rf_allocVector(REALSXP, m));
  SEXP amplitude = PROTECT(Rf_allocVector(REALSXP, m));
  rff_draw_prior(&k, m, d, glue_seed(seed), REAL(omega), REAL(phase), REAL(amplitude),
                 glue_threads(threads));
  const char *names[] = {"omega", "phase", "amplitude", ""};
  SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, omega);
  SET_VECTOR_ELT(out, 1, phase);
  SET_VECTOR_ELT(out, 2, amplitude);
  UNPROTECT(4);
  return out;
}

SEXP C_rff_matmul(SEXP omega, SEXP phase, SEXP variance, SEXP x, SEXP W,
                  SEXP threads)
{
  const points om = glue_points(omega, "omega"), p = glue_points(x, "x");
  const points w = glue_points(W, "W");
  const double s2 = Rf_asReal(variance);
  if (om.d != p.d || w.n != om.n)
    Rf_error("internal error: non-conformable feature product");
  const rff f = {om.n, om.d, om.x, glue_doubles(phase, om.n, "phase"),
                 sqrt(2.0 * s2 / om.n), 0, 0};
  SEXP out = PROTECT(Rf_allocMatrix(REALSXP, p.n, w.d));
  rff_matmul(&f, &p, w.x, w.d, REAL(out), p.n, glue_threads(threads));
  UNPROTECT(1);
  return out;
}

SEXP C_rng_normal(SEXP seed, SEXP stream, SEXP len)
{
  const rng_stream st = (rng_stream)glue_choice(stream, glue_rng_streams, "stream");
  const double n = Rf_asReal(len);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)n));
  rng_normal_fill(glue_seed(seed), st, 0, (size_t)n, REAL(out));
  UNPROTECT(1);
  return out;
}
