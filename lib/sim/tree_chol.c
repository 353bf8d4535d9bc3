/* lib/sim: the Cholesky factorization of a joint-space inertia matrix that keeps the kinematic tree's sparsity
 * (Featherstone, "Rigid Body Dynamics Algorithms", section 6.5, table 6.3: H = L^T L with L lower triangular;
 * numbering the coordinates parents first, L has no fill-in: L_ki != 0 only when i is k or an ancestor of k),
 * and the two triangular solves. The work is the sum over the coordinates of their depth squared instead of
 * n^3 / 6, and a right-hand side that is zero outside one branch (a contact or a held joint) stays zero there. */
#include <math.h>

#include "sim_internal.h"

void tree_order(const rb_model *m, size_t *perm, size_t *pos, int *par)
{
    size_t vo = m->floating ? 6 : 0, k = 0;
    for (; k < vo; k++)
        perm[k] = k, pos[k] = k, par[k] = (int)k - 1;
    for (size_t b = 0; b < m->n_bodies; b++) {
        int d = m->bodies[b].dof;
        if (d < 0)
            continue;
        int anc = m->bodies[b].parent;
        while (anc >= 0 && m->bodies[anc].dof < 0)
            anc = m->bodies[anc].parent;
        perm[k] = vo + (size_t)d;
        pos[vo + (size_t)d] = k;
        par[k] = anc >= 0 ? (int)pos[vo + (size_t)m->bodies[anc].dof] : (int)vo - 1;
        k++;
    }
}

bool tree_ltl(double *H, const int *par, size_t n)
{
    for (size_t k = n; k-- > 0;) {
        double *Hk = H + k * n;
        if (!(Hk[k] > 0.0))
            return false;
        double d = sqrt(Hk[k]);
        Hk[k] = d;
        for (int i = par[k]; i >= 0; i = par[i])
            Hk[i] /= d;
        for (int i = par[k]; i >= 0; i = par[i]) {
            double *Hi = H + (size_t)i * n, hki = Hk[i];
            for (int j = i; j >= 0; j = par[j])
                Hi[j] -= hki * Hk[j];
        }
    }
    return true;
}

void tree_solve_lt(const double *L, const int *par, size_t n, double *x)
{
    for (size_t k = n; k-- > 0;) {
        if (x[k] == 0.0)
            continue; /* nothing to carry up the tree (the zeros of a branch-local right-hand side) */
        const double *Lk = L + k * n;
        double xk = x[k] / Lk[k];
        x[k] = xk;
        for (int i = par[k]; i >= 0; i = par[i])
            x[i] -= Lk[i] * xk;
    }
}

void tree_solve_l(const double *L, const int *par, size_t n, double *x)
{
    for (size_t k = 0; k < n; k++) {
        const double *Lk = L + k * n;
        double v = x[k];
        for (int i = par[k]; i >= 0; i = par[i])
            v -= Lk[i] * x[i];
        x[k] = v / Lk[k];
    }
}
