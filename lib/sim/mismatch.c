/* lib/sim: the plant-model mismatch's draws and friction law (roboest/sim_mismatch.h). */
#include <math.h>
#include <string.h>

#include "roboest/sim.h"

void rb_sim_mismatch_realistic(rb_sim_mismatch *mm)
{
    /* The documented defaults (configs/closed_loop/README.md, "Plant-model mismatch": each number's source). */
    memset(mm, 0, sizeof *mm);
    mm->enabled = true;
    mm->level = 1.0;
    mm->mass_sd = 0.05;
    mm->com_sd = 0.005;
    mm->inertia_sd = 0.10;
    mm->friction_scale_sd = 0.15;
    mm->friction_asymmetry = 0.10;
    mm->friction_load = 0.05;
    mm->friction_load_v = 0.01;
    mm->friction_temp_coeff = -0.005;
    mm->friction_temp_offset = 10.0;
    mm->friction_warmup = 0.01;
    mm->command_delay = 1.0;
    mm->ft_drift_force = 0.02;
    mm->ft_drift_torque = 0.002;
    mm->current_offset = 0.02;
    mm->elastic_stiffness = 6.7e4; /* Harmonic Drive size 32, K1 */
    mm->elastic_damping = 7.5;
    mm->measurement_delay = 0.001;
    mm->current_resolution = 25.0 / 4096.0;
    mm->current_noise = 0.03;
}

void rb_sim_mismatch_draws_free(rb_sim_mismatch_draws *d)
{
    if (!d)
        return;
    rb_free(d->body_pi);
    rb_free(d->changed);
    rb_free(d->fric_scale);
    rb_free(d->fric_asym);
    rb_free(d->ft_rate);
    rb_free(d->current_offset);
    memset(d, 0, sizeof *d);
}

static double clipped_normal(rb_rng *rng, double lim)
{
    double z = rb_rng_normal(rng);
    return z > lim ? lim : z < -lim ? -lim : z;
}

static double floor_at(double x, double lo) { return x < lo ? lo : x; }

/* pi = [m, m c, I_c + m (|c|^2 1 - c c^T)] (about the body origin, roboest/spatial.h order). */
static void pi_from(double m, const double c[3], const double Ic[6], double pi[10])
{
    double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
    pi[0] = m;
    for (int i = 0; i < 3; i++)
        pi[1 + i] = m * c[i];
    pi[4] = Ic[0] + m * (cc - c[0] * c[0]);
    pi[5] = Ic[1] - m * c[0] * c[1];
    pi[6] = Ic[2] - m * c[0] * c[2];
    pi[7] = Ic[3] + m * (cc - c[1] * c[1]);
    pi[8] = Ic[4] - m * c[1] * c[2];
    pi[9] = Ic[5] + m * (cc - c[2] * c[2]);
}

static void perturb_body(const rb_sim_mismatch *mm, rb_rng *rng, const double pi0[10], double pi[10])
{
    double m = pi0[0], c[3], Ic[6], cc = 0.0;
    for (int i = 0; i < 3; i++) {
        c[i] = pi0[1 + i] / m;
        cc += c[i] * c[i];
    }
    Ic[0] = pi0[4] - m * (cc - c[0] * c[0]);
    Ic[1] = pi0[5] + m * c[0] * c[1];
    Ic[2] = pi0[6] + m * c[0] * c[2];
    Ic[3] = pi0[7] - m * (cc - c[1] * c[1]);
    Ic[4] = pi0[8] + m * c[1] * c[2];
    Ic[5] = pi0[9] - m * (cc - c[2] * c[2]);
    double L = mm->level;
    /* always four draws per body, in this order, whatever the magnitudes: a level changes values, not streams */
    double zm = clipped_normal(rng, 2.5), zi = clipped_normal(rng, 2.5), zc[3];
    for (int i = 0; i < 3; i++)
        zc[i] = clipped_normal(rng, 2.5);
    double m2 = m * floor_at(1.0 + L * mm->mass_sd * zm, 0.2), kI = floor_at(1.0 + L * mm->inertia_sd * zi, 0.2);
    for (int i = 0; i < 6; i++)
        Ic[i] *= kI * m2 / m; /* the inertia follows the mass (same shape, denser) times its own error */
    for (int i = 0; i < 3; i++)
        c[i] += L * mm->com_sd * zc[i];
    pi_from(m2, c, Ic, pi);
}

int rb_sim_mismatch_draw(const rb_sim_mismatch *mm, const rb_model *m, uint64_t seed, rb_sim_mismatch_draws *d,
                         rb_err *err)
{
    memset(d, 0, sizeof *d);
    const double v[] = {mm->level,
                        mm->mass_sd,
                        mm->com_sd,
                        mm->inertia_sd,
                        mm->friction_scale_sd,
                        mm->friction_asymmetry,
                        mm->friction_load,
                        mm->command_delay,
                        mm->ft_drift_force,
                        mm->ft_drift_torque,
                        mm->current_offset,
                        mm->friction_warmup,
                        mm->elastic_stiffness,
                        mm->elastic_damping,
                        mm->measurement_delay,
                        mm->current_resolution,
                        mm->current_noise};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!(v[i] >= 0) || !isfinite(v[i]))
            return rb_err_set(err, RB_ECONFIG, "sim: mismatch: magnitudes must be finite and >= 0");
    if (!isfinite(mm->friction_temp_coeff) || !isfinite(mm->friction_temp_offset) ||
        (mm->friction_load > 0 && !(mm->friction_load_v > 0)))
        return rb_err_set(err, RB_ECONFIG, "sim: mismatch: friction: temp_coeff, temp_offset finite; load_v > 0");
    size_t nb = m->n_bodies, n = m->n_dofs, nft = m->n_ft;
    d->n_bodies = nb, d->n_dofs = n, d->n_ft = nft;
    d->body_pi = rb_calloc(10 * (nb ? nb : 1), sizeof *d->body_pi);
    d->changed = rb_calloc(nb ? nb : 1, 1);
    d->fric_scale = rb_calloc(n ? n : 1, sizeof *d->fric_scale);
    d->fric_asym = rb_calloc(n ? n : 1, sizeof *d->fric_asym);
    d->ft_rate = rb_calloc(6 * (nft ? nft : 1), sizeof *d->ft_rate);
    d->current_offset = rb_calloc(n ? n : 1, sizeof *d->current_offset);
    if (!d->body_pi || !d->changed || !d->fric_scale || !d->fric_asym || !d->ft_rate || !d->current_offset) {
        rb_sim_mismatch_draws_free(d);
        return rb_err_set(err, RB_ENOMEM, "sim: out of memory");
    }
    double L = mm->level;
    rb_rng rng;
    rb_rng_seed(&rng, seed ^ RB_SIM_MISMATCH_STREAM);
    for (size_t b = 0; b < nb; b++) {
        const double *pi0 = m->bodies[b].inertia;
        memcpy(d->body_pi + 10 * b, pi0, 10 * sizeof *pi0);
        if (pi0[0] > 0 && (mm->mass_sd > 0 || mm->com_sd > 0 || mm->inertia_sd > 0)) {
            perturb_body(mm, &rng, pi0, d->body_pi + 10 * b);
            d->changed[b] = L > 0;
        }
    }
    for (size_t j = 0; j < n; j++) {
        d->fric_scale[j] = floor_at(1.0 + L * mm->friction_scale_sd * clipped_normal(&rng, 2.5), 0.2);
        double a = L * mm->friction_asymmetry * clipped_normal(&rng, 2.5);
        d->fric_asym[j] = a > 0.9 ? 0.9 : a < -0.9 ? -0.9 : a;
    }
    for (size_t k = 0; k < nft; k++)
        for (int i = 0; i < 6; i++)
            d->ft_rate[6 * k + i] = L * (i < 3 ? mm->ft_drift_force : mm->ft_drift_torque) * rb_rng_normal(&rng);
    for (size_t j = 0; j < n; j++)
        d->current_offset[j] = L * mm->current_offset * rb_rng_normal(&rng);
    d->command_delay = (size_t)floor(L * mm->command_delay + 0.5);
    /* no draws: a level changes these values, not the streams */
    /* the level scales the compliance (level 0: rigid), the damping keeps its ratio */
    bool el = L > 0 && mm->elastic_stiffness > 0;
    d->stiffness = el ? mm->elastic_stiffness / L : 0.0, d->damping = el ? mm->elastic_damping / sqrt(L) : 0.0;
    d->measurement_delay = L * mm->measurement_delay;
    d->current_resolution = L * mm->current_resolution, d->current_noise = L * mm->current_noise;
    return RB_OK;
}

double rb_sim_mismatch_friction(const rb_sim_mismatch *mm, double scale, double asym, double tau_f, double v,
                                double tau_m, double t)
{
    double L = mm->level, sg = v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0;
    double temp = 1.0 + L * mm->friction_temp_coeff * (mm->friction_temp_offset + mm->friction_warmup * t);
    double out = scale * (1.0 + asym * sg) * floor_at(temp, 0.2) * tau_f;
    if (mm->friction_load > 0)
        out += L * mm->friction_load * fabs(tau_m) * tanh(v / mm->friction_load_v);
    return out;
}
